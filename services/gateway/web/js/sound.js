// Optional sounds, synthesised with WebAudio (no files): a move, a
// capture, an explosion, the end of a game and a low-time tick. Off until
// the player turns them on.

let ctx = null;
let enabled = false;

let gestured = false;

/** Browsers let audio start only after a click or a key: until then sounds wait. */
function wake() {
  if (!enabled || !gestured) return;
  if (!ctx) {
    const AudioContext = window.AudioContext || window.webkitAudioContext;
    if (AudioContext) ctx = new AudioContext();
  }
  if (ctx && ctx.state === 'suspended') ctx.resume().catch(() => {});
}

for (const type of ['pointerdown', 'keydown']) {
  window.addEventListener(type, () => { gestured = true; wake(); }, { capture: true, passive: true });
}

export function setEnabled(on) {
  enabled = on;
  wake();
}

function tone(freq, duration, { type = 'sine', gain = 0.15, slide = 0, delay = 0 } = {}) {
  const t = ctx.currentTime + delay;
  const osc = ctx.createOscillator();
  const amp = ctx.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, t);
  if (slide) osc.frequency.exponentialRampToValueAtTime(Math.max(20, freq + slide), t + duration);
  amp.gain.setValueAtTime(gain, t);
  amp.gain.exponentialRampToValueAtTime(0.0001, t + duration);
  osc.connect(amp).connect(ctx.destination);
  osc.start(t);
  osc.stop(t + duration + 0.02);
}

function noise(duration, gain) {
  const length = Math.floor(ctx.sampleRate * duration);
  const buffer = ctx.createBuffer(1, length, ctx.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < length; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / length) ** 2;
  const source = ctx.createBufferSource();
  source.buffer = buffer;
  const filter = ctx.createBiquadFilter();
  filter.type = 'lowpass';
  filter.frequency.setValueAtTime(1800, ctx.currentTime);
  filter.frequency.exponentialRampToValueAtTime(120, ctx.currentTime + duration);
  const amp = ctx.createGain();
  amp.gain.value = gain;
  source.connect(filter).connect(amp).connect(ctx.destination);
  source.start();
}

export function play(kind) {
  if (!enabled || !ctx || ctx.state !== 'running') return;
  switch (kind) {
    case 'move': tone(420, 0.08, { type: 'triangle', gain: 0.2 }); break;
    case 'capture': tone(300, 0.12, { type: 'square', gain: 0.08, slide: -120 }); break;
    case 'explosion': noise(0.7, 0.5); tone(90, 0.5, { type: 'sawtooth', gain: 0.12, slide: -60 }); break;
    case 'end': tone(523, 0.18, { gain: 0.12 }); tone(659, 0.18, { gain: 0.12, delay: 0.16 }); tone(784, 0.3, { gain: 0.12, delay: 0.32 }); break;
    case 'notify': tone(880, 0.1, { gain: 0.08 }); break;
    case 'tick': tone(1200, 0.03, { type: 'square', gain: 0.04 }); break;
    default: break;
  }
}
