// The page's connections: the player's WebSocket (js/net.js), the computer
// in this browser for offline games (offline/offline.js, same interface),
// and in a same-device game a second player's WebSocket. Which of the first
// two is `current()` follows the game on screen. The header's connection
// line is drawn here from all of them.

import { Connection } from './net.js';
import { OfflineConnection, isOfflineGame } from '../offline/offline.js';
import * as store from './store.js';
import { $ } from './page.js';

let hooks = { onFrame: () => {}, onReady: () => {} };
let currentConn = null;
let onlineConn = null;
let offlineConn = null;
let guestConn = null;

/** `onFrame(conn, frame)` for every frame, `onReady(conn)` after every hello. */
export function initConnections(given) {
  hooks = given;
}

/** The player's connection for the game on screen (and for home). */
export const current = () => currentConn;
export const online = () => onlineConn;
export const guest = () => guestConn;
export const isOffline = (conn) => !!conn && conn === offlineConn;

function wire(conn, label) {
  conn.label = label;
  conn.onFrame((frame) => hooks.onFrame(conn, frame));
  conn.onStatus(() => showConnection());
  conn.onReady(() => hooks.onReady(conn));
  return conn;
}

function webSocket(label, tokenKey) {
  return wire(new Connection({
    token: () => store.get(tokenKey),
    saveToken: (token) => store.set(tokenKey, token),
    name: () => (label === 'main' ? store.get(store.KEYS.name, '') : 'Guest'),
  }), label);
}

export function startOnline() {
  onlineConn = webSocket('main', store.KEYS.token);
  currentConn = onlineConn;
  showConnection();
  onlineConn.start();
}

/** The computer in this browser: created on first use, wired like the WebSocket. */
export function offline() {
  if (!offlineConn) {
    offlineConn = wire(new OfflineConnection({ name: () => store.get(store.KEYS.name, '') || 'You' }), 'main');
    offlineConn.start();
  }
  return offlineConn;
}

/** Offline games are played through the page's own engine, the rest through the server. */
export function useConnectionFor(id) {
  const conn = isOfflineGame(id) ? offline() : onlineConn;
  if (conn && currentConn !== conn) {
    currentConn = conn;
    showConnection();
  }
}

/** Home is online. */
export function backOnline() {
  if (onlineConn) currentConn = onlineConn;
}

/** A fresh second player on this device, replacing any before. */
export function startGuest() {
  if (guestConn) guestConn.stop();
  guestConn = webSocket('guest', store.KEYS.guestToken);
  guestConn.start();
  return guestConn;
}

export function stopGuest() {
  if (!guestConn) return false;
  guestConn.stop();
  guestConn = null;
  return true;
}

export function showConnection() {
  const conns = [currentConn, guestConn].filter(Boolean);
  const state = conns.some((c) => c.state === 'offline') ? 'offline'
    : conns.some((c) => c.state !== 'connected') ? 'reconnecting' : 'connected';
  const el = $('connection');
  el.dataset.state = state;
  el.textContent = state === 'connected' ? 'connected'
    : state === 'offline' ? 'offline' : (currentConn.everConnected ? 'reconnecting…' : 'connecting…');
  if (currentConn && currentConn === offlineConn) el.textContent = 'offline: playing in this browser';
}
