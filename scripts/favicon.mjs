// The dashboard's icon, drawn here so the build needs no image tools: an SVG for browsers that
// take one (<link rel="icon">) and a 32×32 favicon.ico (one embedded PNG) for /favicon.ico, which
// browsers and bookmarks ask for by name. A lens ring on a dark rounded square: "Lookout".
import zlib from 'node:zlib';

const BACKGROUND = [0x1f, 0x2a, 0x44];
const RING = [0x7f, 0xb2, 0xff];
const PUPIL = [0xff, 0xff, 0xff];

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#1f2a44"/>
<circle cx="16" cy="16" r="8.5" fill="none" stroke="#7fb2ff" stroke-width="3"/>
<circle cx="16" cy="16" r="3.5" fill="#ffffff"/>
</svg>
`;

/** RGBA of one pixel of the 32×32 icon (the SVG's shapes, evaluated at the pixel centre). */
function pixel(x, y) {
  const cx = x + 0.5 - 16;
  const cy = y + 0.5 - 16;
  const r = Math.hypot(cx, cy);
  // Rounded square: outside the corner arcs is transparent.
  const qx = Math.max(Math.abs(cx) - 9, 0);
  const qy = Math.max(Math.abs(cy) - 9, 0);
  if (Math.hypot(qx, qy) > 7) return [0, 0, 0, 0];
  if (r <= 3.5) return [...PUPIL, 255];
  if (Math.abs(r - 8.5) <= 1.5) return [...RING, 255];
  return [...BACKGROUND, 255];
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

function png(size) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  const rows = [];
  for (let y = 0; y < size; y += 1) {
    rows.push(Buffer.from([0])); // filter: none
    for (let x = 0; x < size; x += 1) rows.push(Buffer.from(pixel(x, y)));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An ICO file holding one 32×32 PNG image (ICO allows PNG payloads since Windows Vista). */
export function faviconIco() {
  const image = png(32);
  const head = Buffer.alloc(22);
  head.writeUInt16LE(0, 0); // reserved
  head.writeUInt16LE(1, 2); // type: icon
  head.writeUInt16LE(1, 4); // one image
  head[6] = 32; // width
  head[7] = 32; // height
  head[8] = 0; // no palette
  head[9] = 0;
  head.writeUInt16LE(1, 10); // planes
  head.writeUInt16LE(32, 12); // bits per pixel
  head.writeUInt32LE(image.length, 14);
  head.writeUInt32LE(22, 18); // offset of the image
  return Buffer.concat([head, image]);
}
