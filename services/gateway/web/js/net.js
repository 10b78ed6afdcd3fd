// One WebSocket to the gateway for one player: says hello with the stored
// token, reconnects with backoff after a drop (at once when the gateway
// asks), matches replies to requests by id, and tells the page its state:
// "connected", "reconnecting" or "offline".

let counter = 0;

export class Connection {
  /**
   * @param {object} opts
   * @param {() => string|null} opts.token   the stored token, if any
   * @param {(token: string|null) => void} opts.saveToken
   * @param {() => string} opts.name         the player's display name
   */
  constructor(opts) {
    this.opts = opts;
    this.ws = null;
    this.player = null;
    this.ready = false;
    this.state = 'reconnecting';
    this.everConnected = false;
    this.pending = new Map();
    this.queue = [];
    this.listeners = new Set();
    this.statusListeners = new Set();
    this.readyListeners = new Set();
    this.attempt = 0;
    this.timer = null;
    this.stopped = false;
    this.downSince = Date.now();
    window.addEventListener('online', () => this.reconnectNow());
    window.addEventListener('offline', () => this.setState('offline'));
  }

  onFrame(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  onStatus(fn) { this.statusListeners.add(fn); }
  /** Called after each successful hello, first or after a reconnect. */
  onReady(fn) { this.readyListeners.add(fn); }

  start() {
    this.stopped = false;
    if (!this.ws) this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.helloWanted = false;
    clearTimeout(this.helloTimer);
    if (this.ws) this.ws.close(1000, 'bye');
  }

  open() {
    clearTimeout(this.timer);
    // A new socket's hello says the name as it is now: no other hello is owed.
    this.helloWanted = false;
    clearTimeout(this.helloTimer);
    const scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
    let ws;
    try {
      ws = new WebSocket(`${scheme}${location.host}/ws`);
    } catch (e) {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      const hello = { t: 'hello', id: 'hello' };
      const token = this.opts.token();
      if (token) hello.token = token;
      const n = this.opts.name();
      if (n) hello.name = n;
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch { return; }
      if (frame && typeof frame.t === 'string') this.receive(frame);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      const wasReady = this.ready;
      this.ready = false;
      this.dropSentOn(ws);
      if (wasReady) this.downSince = Date.now();
      if (!this.stopped) this.scheduleReconnect();
    };
    ws.onerror = () => {};
  }

  scheduleReconnect() {
    this.attempt += 1;
    const offline = !navigator.onLine || Date.now() - this.downSince > 20000;
    this.setState(offline ? 'offline' : 'reconnecting');
    const delay = this.attempt <= 1 ? 250 : Math.min(5000, 500 * 2 ** Math.min(this.attempt - 2, 4));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay + Math.random() * 250);
  }

  /**
   * Requests sent on `ws`, which closed: their answers are lost, so they
   * fail. Those still queued (never sent) wait for the next socket.
   */
  dropSentOn(ws) {
    for (const [id, p] of this.pending) {
      if (p.socket !== ws) continue;
      this.pending.delete(id);
      p.reject({ code: 'disconnected', message: 'the connection dropped' });
    }
  }

  /**
   * Says hello again on a fresh socket (a new name travels only in hello)
   * without losing a request: frames sent from now on wait for the new
   * welcome, and the old socket closes once what was sent on it has been
   * answered (at most a few seconds).
   */
  sayHelloAgain() {
    if (this.stopped) return;
    this.helloWanted = true;
    clearTimeout(this.helloTimer);
    this.helloTimer = setTimeout(() => this.helloWhenIdle(true), 3000);
    this.helloWhenIdle(false);
  }

  helloWhenIdle(force) {
    if (!this.helloWanted) return;
    const ws = this.ws;
    const waiting = [...this.pending.values()].some((p) => p.socket && p.socket === ws);
    if (waiting && !force) return;
    this.helloWanted = false;
    clearTimeout(this.helloTimer);
    if (!ws) return; // the next socket's hello carries the name anyway
    this.ws = null;
    this.ready = false;
    this.dropSentOn(ws);
    try { ws.close(1000, 'hello again'); } catch { /* closing anyway */ }
    this.open();
  }

  reconnectNow() {
    if (this.stopped) return;
    this.attempt = 0;
    if (this.ws && this.ready) {
      // The socket lived through the blip: say so (and check it with a ping).
      this.downSince = Date.now();
      this.setState('connected');
      this.send({ t: 'ping' });
      return;
    }
    if (this.ws) { try { this.ws.close(); } catch { /* closing anyway */ } this.ws = null; }
    this.open();
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    for (const fn of this.statusListeners) fn(state);
  }

  receive(frame) {
    if (frame.t === 'welcome' && frame.id === 'hello') {
      this.player = frame.player;
      this.opts.saveToken(frame.token);
      this.ready = true;
      this.everConnected = true;
      this.attempt = 0;
      this.setState('connected');
      for (const fn of this.readyListeners) fn(this);
      const queued = this.queue;
      this.queue = [];
      for (const f of queued) this.send(f);
    } else if (frame.t === 'error' && frame.id === 'hello') {
      if (frame.code === 'unauthorized' && this.opts.token()) {
        // The identity is gone (the server forgot its secret): start again as a new player.
        this.opts.saveToken(null);
        this.identityLost = true;
        const hello = { t: 'hello', id: 'hello' };
        const n = this.opts.name();
        if (n) hello.name = n;
        this.ws.send(JSON.stringify(hello));
      } else if (frame.code === 'bad_request' && this.opts.name()) {
        // A name the server will not take: go on without it.
        this.ws.send(JSON.stringify({ t: 'hello', id: 'hello', ...(this.opts.token() ? { token: this.opts.token() } : {}) }));
      }
      return;
    } else if (frame.t === 'reconnect') {
      // The gateway is going away: reconnect as soon as it closes.
      this.attempt = 0;
    }
    if (frame.id != null && this.pending.has(frame.id)) {
      const p = this.pending.get(frame.id);
      this.pending.delete(frame.id);
      if (frame.t === 'error') p.reject(frame); else p.resolve(frame);
    }
    for (const fn of this.listeners) fn(frame, this);
    if (this.helloWanted) this.helloWhenIdle(false);
  }

  /** Sends a frame now, or once connected (and after a hello said again). */
  send(frame) {
    if (this.ready && !this.helloWanted && this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(frame));
      const p = frame.id != null && this.pending.get(frame.id);
      if (p) p.socket = this.ws;
    } else {
      this.queue.push(frame);
    }
  }

  /** Sends a frame with an id; resolves with its first reply, rejects with an error frame. */
  request(frame, timeoutMs = 15000) {
    const id = `r${++counter}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending.delete(id)) reject({ code: 'timeout', message: 'the server did not answer in time' });
      }, timeoutMs);
      // `socket`: the socket it went out on, once sent.
      this.pending.set(id, {
        socket: null,
        resolve: (f) => { clearTimeout(timer); resolve(f); },
        reject: (f) => { clearTimeout(timer); reject(f); },
      });
      this.send({ ...frame, id });
    });
  }

  /** A command whose effect arrives as an event: errors still come back through the promise. */
  command(frame) {
    return this.request(frame).catch((error) => {
      // A timeout only means no direct reply, which these commands never get.
      if (error.code === 'timeout') return null;
      throw error;
    });
  }
}
