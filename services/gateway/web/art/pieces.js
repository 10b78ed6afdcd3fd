// Chess pieces drawn for Fogblast, as SVG strings.
//
// One set of shapes (a 100 x 100 box, the piece standing on y = 90) is shared
// by every theme; a theme changes only fills, strokes, gradients and the
// ornament laid over each piece (veins, chisel marks, frost, a trapped insect,
// shell ridges, rivets and wood grain). `pieceSvg(theme, color, role, style)`
// returns a complete <svg> element as a string: style '2d' is the flat icon
// seen from the front, style '3d' the same silhouette turned into an upright
// piece with a round base, cylinder shading and a contact shadow, drawn to
// stand on a tilted square. Every call gets gradient and clip ids of its own,
// so any number of pieces can share a page.

export const THEMES = [
  { id: 'felt', name: 'Classic felt' },
  { id: 'marble', name: 'Renaissance marble' },
  { id: 'sandstone', name: 'Stone Age sandstone' },
  { id: 'glacier', name: 'Glacier' },
  { id: 'amber', name: 'Jurassic amber' },
  { id: 'tidepool', name: 'Tide pool' },
  { id: 'chamber', name: 'Medieval chamber' },
];

export const ROLES = ['k', 'q', 'r', 'b', 'n', 'p'];

export const ROLE_NAMES = { k: 'king', q: 'queen', r: 'rook', b: 'bishop', n: 'knight', p: 'pawn' };

// ---------------------------------------------------------------------------
// Geometry: every role is a list of filled shapes ('body' or 'trim') above the
// shared base, and detail lines drawn over them. The base (y 80..90) is added
// per style. `mark` is where an ornament such as the amber insect sits.
// ---------------------------------------------------------------------------

const SHAPES = {
  p: {
    fill: [
      ['body', 'M41 40 C41 54 35 66 27 81 L73 81 C65 66 59 54 59 40 Z'],
      ['trim', 'M33 41 C33 37 67 37 67 41 C67 45 33 45 33 41 Z'],
      ['body', 'M50 14 A13.5 13.5 0 1 1 49.9 14 Z'],
    ],
    lines: [],
    mark: [50, 62],
    top: 14,
  },
  r: {
    fill: [
      ['body', 'M31 38 L29 76 L71 76 L69 38 Z'],
      ['trim', 'M26 33 L74 33 L72 40 L28 40 Z'],
      ['body', 'M24 12 L35 12 L35 19 L44 19 L44 12 L56 12 L56 19 L65 19 L65 12 L76 12 L76 33 L24 33 Z'],
      ['trim', 'M25 75 L75 75 L77 81 L23 81 Z'],
    ],
    lines: ['M33 48 L67 48', 'M33 62 L67 62'],
    mark: [50, 56],
    top: 12,
  },
  b: {
    fill: [
      ['body', 'M42 60 C41 68 35 74 29 81 L71 81 C65 74 59 68 58 60 Z'],
      ['trim', 'M33 58 C33 53 67 53 67 58 C67 63 33 63 33 58 Z'],
      ['body', 'M50 16 C38 26 31 38 33 48 C34 53 40 55 50 55 C60 55 66 53 67 48 C69 38 62 26 50 16 Z'],
      ['trim', 'M50 4 A6 6 0 1 1 49.9 4 Z'],
    ],
    lines: ['M57 26 L45 40', 'M40 70 L60 70'],
    mark: [52, 42],
    top: 4,
  },
  q: {
    fill: [
      ['body', 'M33 66 C35 72 30 77 25 81 L75 81 C70 77 65 72 67 66 Z'],
      ['body', 'M30 62 L17 25 L36 44 L35 16 L50 40 L65 16 L64 44 L83 25 L70 62 Z'],
      ['trim', 'M29 61 C29 57 71 57 71 61 L71 66 C71 70 29 70 29 66 Z'],
      ['trim', 'M17 19 A5 5 0 1 1 16.9 19 Z'],
      ['trim', 'M35 10 A5 5 0 1 1 34.9 10 Z'],
      ['trim', 'M50 33 A5 5 0 1 1 49.9 33 Z'],
      ['trim', 'M65 10 A5 5 0 1 1 64.9 10 Z'],
      ['trim', 'M83 19 A5 5 0 1 1 82.9 19 Z'],
    ],
    lines: ['M33 52 C44 48 56 48 67 52'],
    mark: [50, 74],
    top: 10,
  },
  k: {
    fill: [
      ['body', 'M34 66 C36 72 31 77 25 81 L75 81 C69 77 64 72 66 66 Z'],
      ['body', 'M31 61 C20 46 27 29 41 31 C45 31 48 33 50 36 C52 33 55 31 59 31 C73 29 80 46 69 61 Z'],
      ['trim', 'M29 60 C29 56 71 56 71 60 L71 65 C71 69 29 69 29 65 Z'],
      ['trim', 'M46 3 L54 3 L54 10 L61 10 L61 17 L54 17 L54 31 L46 31 L46 17 L39 17 L39 10 L46 10 Z'],
    ],
    lines: ['M50 38 L50 56', 'M35 50 C42 46 58 46 65 50'],
    mark: [50, 74],
    top: 3,
  },
  n: {
    fill: [
      [
        'body',
        'M29 81 C28 70 33 62 45 52 C39 52 33 56 26 58 C20 60 13 56 13 49 C13 45 15 42 19 39 ' +
          'L37 22 C38 18 40 15 43 13 L46 4 L52 12 C64 13 75 22 79 38 C82 52 79 66 73 81 Z',
      ],
      ['trim', 'M25 75 L75 75 L77 81 L23 81 Z'],
    ],
    lines: [
      'M52 13 C62 18 68 26 71 38 C73 48 72 60 69 72',
      'M57 18 L61 14 M63 24 L68 21 M67 32 L72 30 M69 41 L75 40 M70 50 L76 51 M70 59 L76 61',
    ],
    dots: [
      [38, 26, 3.2],
      [19.5, 46, 1.8],
    ],
    mark: [57, 50],
    top: 4,
  },
};

// ---------------------------------------------------------------------------
// Themes: the materials of each side.
// fill: [highlight, mid, shade]; stroke: outline; trim: band/collar fill
// (null = same as the body); detail: colour of the drawn lines; deco: the
// ornament laid over the silhouette. On each square colour of its theme a
// piece's outline or its body's middle colour reaches a contrast of 3:1
// (tests/contrast.test.mjs): hence the light outlines of some black sets.
// ---------------------------------------------------------------------------

const GOLD = ['#fff3b0', '#e2b33f', '#8c6511'];

const MATERIALS = {
  felt: {
    w: { fill: ['#fffdf6', '#f1e8d2', '#cdbf9c'], stroke: '#2b2217', trim: null, detail: '#2b2217' },
    b: { fill: ['#6a625c', '#2b2623', '#0b0a09'], stroke: '#020202', trim: null, detail: '#e9dfcf' },
    deco: null,
  },
  marble: {
    w: { fill: ['#ffffff', '#f0eee9', '#cfcac0'], stroke: '#4e4738', trim: GOLD, detail: '#6f5a1f', vein: '#8f877b' },
    b: { fill: ['#5b5b66', '#26262d', '#0b0b0f'], stroke: '#e6e1d6', trim: GOLD, detail: '#f0d27a', vein: '#e6e1d6' },
    deco: 'veins',
  },
  sandstone: {
    w: { fill: ['#fde6bb', '#f4d09a', '#c99450'], stroke: '#4d2f12', trim: null, detail: '#5d3a16', mark: '#7a4d1e' },
    b: { fill: ['#7a4a2b', '#4a2a16', '#22110a'], stroke: '#f8dcae', trim: null, detail: '#e0a86a', mark: '#1c0e05' },
    deco: 'chisel',
  },
  glacier: {
    w: {
      fill: ['#ffffff', '#e6f4fd', '#a9d2ee'],
      stroke: '#2f6f9f',
      trim: null,
      detail: '#2f6f9f',
      opacity: 0.97,
      frost: '#ffffff',
    },
    b: {
      fill: ['#3f6fb0', '#1b3566', '#070f26'],
      stroke: '#020817',
      trim: null,
      detail: '#8fe3ff',
      opacity: 0.95,
      frost: '#9fe9ff',
    },
    deco: 'ice',
  },
  amber: {
    w: { fill: ['#fff0b0', '#f7b53b', '#e08a26'], stroke: '#241000', trim: null, detail: '#6a3500', bug: '#3a1d05', glow: '#fff6d0' },
    b: { fill: ['#7a3810', '#4a1d05', '#1d0901'], stroke: '#0c0300', trim: null, detail: '#f3a54a', bug: '#050100', glow: '#e88a2e' },
    deco: 'insect',
  },
  tidepool: {
    w: { fill: ['#fffaf4', '#fcd9c8', '#e59a86'], stroke: '#45160f', trim: ['#fff4ee', '#f7a593', '#c9584a'], detail: '#8c3f38', ridge: '#c76a5c' },
    b: { fill: ['#1f7f8f', '#0a4554', '#021a22'], stroke: '#010d11', trim: ['#ffb3a0', '#ff6f5b', '#b23a2a'], detail: '#ff8a73', ridge: '#7fe0da' },
    deco: 'sea',
  },
  chamber: {
    w: { fill: ['#f2f4f6', '#c9ced4', '#9aa1aa'], stroke: '#1f2328', trim: ['#c9ced4', '#7c838c', '#3c4148'], detail: '#2a2e34', rivet: '#e9edf1' },
    b: { fill: ['#875a2e', '#553114', '#2a1606'], stroke: '#f1c98e', trim: ['#9aa0a8', '#5d636b', '#2b2f35'], detail: '#f1c98e', grain: '#3a1e08' },
    deco: 'forge',
  },
};

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

let serial = 0;

function gradient(id, stops, style, vertical) {
  const [hi, mid, lo] = stops;
  if (style === '3d' && !vertical) {
    // Cylinder shading: a lit left flank, a bright ridge, a dark right flank.
    return (
      `<linearGradient id="${id}" x1="0" y1="0" x2="1" y2="0">` +
      `<stop offset="0" stop-color="${mid}"/><stop offset="0.28" stop-color="${hi}"/>` +
      `<stop offset="0.55" stop-color="${mid}"/><stop offset="1" stop-color="${lo}"/></linearGradient>`
    );
  }
  return (
    `<linearGradient id="${id}" x1="0.2" y1="0" x2="0.8" y2="1">` +
    `<stop offset="0" stop-color="${hi}"/><stop offset="0.45" stop-color="${mid}"/>` +
    `<stop offset="1" stop-color="${lo}"/></linearGradient>`
  );
}

// Ornament laid over the silhouette, clipped to it.
function ornament(deco, m, role, shape, uid) {
  const [mx, my] = shape.mark;
  const turn = ROLES.indexOf(role) * 37;
  switch (deco) {
    case 'veins':
      return (
        `<g fill="none" stroke="${m.vein}" stroke-linecap="round" opacity="0.7" transform="rotate(${turn % 60 - 30} 50 50)">` +
        `<path d="M-5 30 C15 26 22 40 38 36 S62 20 75 30 S95 44 110 38" stroke-width="1.3"/>` +
        `<path d="M38 36 C42 48 36 58 44 68 S60 82 58 100" stroke-width="0.9"/>` +
        `<path d="M-5 70 C12 64 24 74 36 66 S58 58 70 70 S88 80 110 72" stroke-width="1.1"/>` +
        `<path d="M70 70 C72 60 80 54 90 50" stroke-width="0.7"/>` +
        `<path d="M10 48 C18 52 22 50 28 54" stroke-width="0.6"/></g>`
      );
    case 'chisel': {
      // Short strokes of a stone chisel and a band of pitting.
      let marks = '';
      for (let i = 0; i < 14; i++) {
        const x = 18 + ((i * 23 + turn) % 64);
        const y = 10 + ((i * 41 + turn * 2) % 72);
        marks += `M${x} ${y} l${4 + (i % 3)} ${-2 - (i % 2)} `;
      }
      let pits = '';
      for (let i = 0; i < 10; i++) {
        const x = 20 + ((i * 29 + turn) % 60);
        const y = 14 + ((i * 17 + turn) % 66);
        pits += `<circle cx="${x}" cy="${y}" r="${0.8 + (i % 3) * 0.4}"/>`;
      }
      return (
        `<path d="${marks}" stroke="${m.mark}" stroke-width="1.4" stroke-linecap="round" opacity="0.55"/>` +
        `<g fill="${m.mark}" opacity="0.4">${pits}</g>`
      );
    }
    case 'ice':
      // Facets catching the light, and a crack.
      return (
        `<g fill="${m.frost}" opacity="0.5"><path d="M30 20 L42 14 L38 46 L28 60 Z"/>` +
        `<path d="M58 52 L66 44 L64 78 L58 80 Z" opacity="0.5"/></g>` +
        `<path d="M60 22 L54 34 L60 40 L52 56" fill="none" stroke="${m.frost}" stroke-width="1.1" opacity="0.8"/>`
      );
    case 'insect':
      // A small insect caught in the resin, with a glow around it.
      return (
        `<radialGradient id="${uid}-glow"><stop offset="0" stop-color="${m.glow}" stop-opacity="0.9"/>` +
        `<stop offset="1" stop-color="${m.glow}" stop-opacity="0"/></radialGradient>` +
        `<circle cx="${mx}" cy="${my}" r="16" fill="url(#${uid}-glow)"/>` +
        `<g transform="translate(${mx} ${my}) rotate(${turn - 60})" stroke="${m.bug}" fill="${m.bug}" stroke-width="0.8" opacity="0.85">` +
        `<ellipse cx="0" cy="0" rx="1.7" ry="3.4"/><circle cx="0" cy="-4.3" r="1.2"/>` +
        `<path d="M-1 -1 L-5 -3 M-1 0.5 L-5 1 M-1 2 L-4.5 5 M1 -1 L5 -3 M1 0.5 L5 1 M1 2 L4.5 5" fill="none"/>` +
        `<ellipse cx="-2.8" cy="-1.5" rx="2.6" ry="1.1" fill="${m.glow}" stroke="none" opacity="0.6"/></g>`
      );
    case 'sea': {
      // Shell ridges fanning from the foot, and a few bubbles.
      let ridges = '';
      for (let i = -3; i <= 3; i++) ridges += `M50 96 L${50 + i * 16} 0 `;
      return (
        `<path d="${ridges}" stroke="${m.ridge}" stroke-width="1.1" opacity="0.55" fill="none"/>` +
        `<g fill="none" stroke="${m.ridge}" stroke-width="0.9" opacity="0.7">` +
        `<circle cx="${mx - 8}" cy="${my - 6}" r="2.2"/><circle cx="${mx + 6}" cy="${my - 14}" r="1.4"/></g>`
      );
    }
    case 'forge':
      if (m.rivet) {
        // Iron: brushed lines and rivets along the bands.
        let lines = '';
        for (let y = 8; y < 90; y += 6) lines += `M0 ${y} L100 ${y + 2} `;
        return (
          `<path d="${lines}" stroke="#ffffff" stroke-width="0.5" opacity="0.25"/>` +
          `<g fill="${m.rivet}" stroke="#2a2e34" stroke-width="0.6">` +
          [30, 40, 50, 60, 70].map((x) => `<circle cx="${x}" cy="78" r="1.6"/>`).join('') +
          `</g>`
        );
      }
      // Oak: wavy grain running up the piece.
      return (
        `<g fill="none" stroke="${m.grain}" stroke-width="1" opacity="0.5">` +
        [22, 34, 46, 58, 70, 82]
          .map((x, i) => `<path d="M${x} 100 C${x - 6} 70 ${x + 7} 50 ${x - 2} 28 S${x + 4} 6 ${x} -4" stroke-width="${0.6 + (i % 3) * 0.4}"/>`)
          .join('') +
        `<ellipse cx="${mx - 6}" cy="${my}" rx="2" ry="4"/></g>`
      );
    default:
      return '';
  }
}

function base(style, trimFill, stroke, uid) {
  if (style === '3d') {
    return (
      `<path d="M21 84 L21 89 A29 5.5 0 0 0 79 89 L79 84 Z" fill="${trimFill}" stroke="${stroke}" stroke-width="2"/>` +
      `<ellipse cx="50" cy="84" rx="29" ry="5.5" fill="url(#${uid}-top)" stroke="${stroke}" stroke-width="2"/>`
    );
  }
  return `<rect x="20" y="80" width="60" height="11" rx="4" fill="${trimFill}" stroke="${stroke}" stroke-width="2.5"/>`;
}

/**
 * An SVG string for one piece.
 * @param {string} theme one of THEMES' ids (unknown ids fall back to 'felt')
 * @param {'w'|'b'} color
 * @param {'p'|'n'|'b'|'r'|'q'|'k'} role
 * @param {'2d'|'3d'} style
 */
export function pieceSvg(theme, color, role, style = '2d') {
  const materials = MATERIALS[theme] || MATERIALS.felt;
  const m = materials[color === 'b' ? 'b' : 'w'];
  const shape = SHAPES[role] || SHAPES.p;
  const flat = style !== '3d';
  const uid = `fbp${++serial}`;
  const defs = [
    gradient(`${uid}-body`, m.fill, style, false),
    gradient(`${uid}-trim`, m.trim || m.fill, style, false),
    gradient(`${uid}-top`, m.trim || m.fill, '2d', true),
  ];
  const bodyFill = `url(#${uid}-body)`;
  const trimFill = `url(#${uid}-trim)`;
  const sw = flat ? 2.5 : 2;
  const outline = shape.fill.map(([, d]) => `<path d="${d}"/>`).join('');
  defs.push(`<clipPath id="${uid}-clip">${outline}</clipPath>`);

  const parts = shape.fill
    .map(([kind, d]) => `<path d="${d}" fill="${kind === 'trim' ? trimFill : bodyFill}"/>`)
    .join('');
  const strokes = `<g fill="none" stroke="${m.stroke}" stroke-width="${sw}" stroke-linejoin="round">${outline}</g>`;
  const lines = shape.lines.length
    ? `<path d="${shape.lines.join(' ')}" fill="none" stroke="${m.detail}" stroke-width="${flat ? 2.2 : 1.8}" stroke-linecap="round"/>`
    : '';
  const dots = (shape.dots || []).map(([x, y, r]) => `<circle cx="${x}" cy="${y}" r="${r}" fill="${m.detail}"/>`).join('');
  const deco = ornament(materials.deco, m, role, shape, uid);
  // The 3D piece: a highlight down its lit side and a shadow on the square.
  const sheen = flat
    ? ''
    : `<rect x="0" y="0" width="100" height="100" fill="url(#${uid}-sheen)"/>`;
  if (!flat) {
    defs.push(
      `<linearGradient id="${uid}-sheen" x1="0" y1="0" x2="1" y2="0"><stop offset="0.2" stop-color="#fff" stop-opacity="0"/>` +
        `<stop offset="0.32" stop-color="#fff" stop-opacity="0.35"/><stop offset="0.42" stop-color="#fff" stop-opacity="0"/>` +
        `<stop offset="0.75" stop-color="#000" stop-opacity="0"/><stop offset="1" stop-color="#000" stop-opacity="0.3"/></linearGradient>`,
      `<radialGradient id="${uid}-shadow"><stop offset="0" stop-color="#000" stop-opacity="0.55"/>` +
        `<stop offset="1" stop-color="#000" stop-opacity="0"/></radialGradient>`,
    );
  }
  const shadow = flat ? '' : `<ellipse class="piece-shadow" cx="53" cy="90" rx="42" ry="9" fill="url(#${uid}-shadow)"/>`;
  // In 3D the body stands on the middle of the round base.
  const lift = flat ? '' : ' transform="translate(0 3)"';
  const opacity = m.opacity ? ` opacity="${m.opacity}"` : '';
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" class="piece-svg" data-style="${flat ? '2d' : '3d'}" aria-hidden="true">` +
    `<defs>${defs.join('')}</defs>` +
    shadow +
    (flat ? '' : base(style, trimFill, m.stroke, uid)) +
    `<g${lift}><g${opacity}>${parts}</g>` +
    `<g clip-path="url(#${uid}-clip)">${deco}${sheen}</g>` +
    `${strokes}${lines}${dots}</g>` +
    (flat ? base(style, trimFill, m.stroke, uid) : '') +
    `</svg>`
  );
}
