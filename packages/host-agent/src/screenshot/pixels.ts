/** How the X server lays out a ZPixmap image of the screen's root window (from the connection setup). */
export interface PixelFormat {
  bitsPerPixel: number;
  /** Each row is padded to a multiple of this many bits. */
  scanlinePad: number;
  /** Whether multi-byte pixels are most significant byte first (image_byte_order MSBFirst). */
  msbFirst: boolean;
  redMask: number;
  greenMask: number;
  blueMask: number;
}

/** An image as 4 bytes a pixel, red, green, blue and one unused byte, rows without padding. */
export interface RgbxImage {
  width: number;
  height: number;
  rgbx: Buffer;
}

/** The usual 24-bit TrueColor screen (Xvfb's default, every x86 X server): B, G, R, unused in memory. */
function isBgrx(format: PixelFormat): boolean {
  return (
    format.bitsPerPixel === 32 &&
    !format.msbFirst &&
    format.redMask === 0xff0000 &&
    format.greenMask === 0xff00 &&
    format.blueMask === 0xff
  );
}

/** Reads one channel out of a pixel value, scaled to 8 bits. */
function channelReader(mask: number): (pixel: number) => number {
  if (mask === 0) return () => 0;
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  let bits = 0;
  while (((mask >>> (shift + bits)) & 1) === 1) bits++;
  const max = 2 ** bits - 1;
  if (bits >= 8) return (pixel) => ((pixel & mask) >>> shift) >>> (bits - 8);
  return (pixel) => Math.round((((pixel & mask) >>> shift) * 255) / max);
}

/** Whether this converter can read the format: TrueColor pixels of 16, 24 or 32 bits. */
export function supportedFormat(format: PixelFormat): boolean {
  return [16, 24, 32].includes(format.bitsPerPixel) && format.redMask !== 0 && format.scanlinePad % 8 === 0;
}

/**
 * Turns the reply of a ZPixmap GetImage into RGBX. The common 32-bit BGRX layout is converted in
 * place (swapping red and blue), with no copy of the image; any other TrueColor layout (16-bit,
 * 30-bit) is read pixel by pixel through its masks into a new buffer.
 */
export function toRgbx(data: Buffer, width: number, height: number, format: PixelFormat): RgbxImage {
  if (isBgrx(format)) {
    const length = width * height * 4;
    // A 32-bit row is always a whole number of scanline units: rows carry no padding.
    for (let offset = 0; offset < length; offset += 4) {
      const blue = data[offset] as number;
      data[offset] = data[offset + 2] as number;
      data[offset + 2] = blue;
    }
    return { width, height, rgbx: data.subarray(0, length) };
  }
  const bytesPerPixel = format.bitsPerPixel / 8;
  const stride = Math.ceil((width * format.bitsPerPixel) / format.scanlinePad) * (format.scanlinePad / 8);
  const red = channelReader(format.redMask);
  const green = channelReader(format.greenMask);
  const blue = channelReader(format.blueMask);
  const read = (offset: number): number => {
    let pixel = 0;
    for (let i = 0; i < bytesPerPixel; i++) {
      const byte = data[offset + (format.msbFirst ? i : bytesPerPixel - 1 - i)] as number;
      pixel = pixel * 256 + byte;
    }
    return pixel;
  };
  const rgbx = Buffer.alloc(width * height * 4);
  for (let row = 0; row < height; row++) {
    for (let column = 0; column < width; column++) {
      const pixel = read(row * stride + column * bytesPerPixel);
      const out = (row * width + column) * 4;
      rgbx[out] = red(pixel);
      rgbx[out + 1] = green(pixel);
      rgbx[out + 2] = blue(pixel);
    }
  }
  return { width, height, rgbx };
}
