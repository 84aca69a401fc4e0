import type { Region } from "./errors.ts";
import type { RgbxImage } from "./pixels.ts";

type Sharp = typeof import("sharp");

let loaded: Promise<Sharp> | undefined;

/**
 * sharp (libvips, its binaries inside its npm packages) is loaded at the first screenshot, not at
 * start: it adds about 20 MB to the agent's memory and 60 ms to its start, which an agent that never
 * takes a screenshot (a headless host, most idle hosts) should not pay.
 */
function loadSharp(): Promise<Sharp> {
  loaded ??= import("sharp").then(({ default: sharp }) => {
    // Every screenshot is a new image: libvips' cache of operations would only hold memory.
    sharp.cache(false);
    return sharp;
  });
  return loaded;
}

/**
 * zlib level 1 and no per-row filter choice: on a 1920×1080 desktop screenshot about 20 ms and
 * 0.5 MB, where sharp's default level 6 takes 40–60 ms for 0.36 MB and adaptive filtering three
 * times as long again (numbers in bench/analysis.md, B11).
 */
const PNG_OPTIONS = { compressionLevel: 1, adaptiveFiltering: false } as const;

/** Encodes RGBX pixels as an RGB PNG, off the event loop (libuv's thread pool). */
export async function encodePng(image: RgbxImage): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(image.rgbx, { raw: { width: image.width, height: image.height, channels: 4 } })
    .removeAlpha()
    .png(PNG_OPTIONS)
    .toBuffer();
}

/** A part of a PNG, as a PNG. */
export async function cropPng(png: Buffer, region: Region): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(png)
    .extract({ left: region.x, top: region.y, width: region.width, height: region.height })
    .png(PNG_OPTIONS)
    .toBuffer();
}

/** Width and height of a PNG, from its IHDR chunk. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || png.readUInt32BE(0) !== 0x89504e47 || png.toString("latin1", 12, 16) !== "IHDR") {
    throw new Error("not a PNG image");
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
