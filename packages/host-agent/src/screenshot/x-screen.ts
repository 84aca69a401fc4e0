import { X11Connection, X11ConnectionLostError } from "../keyboard/x11-client.ts";
import {
  type Region,
  RegionOutsideScreenError,
  regionProblem,
  type ScreenSize,
  ScreenUnavailableError,
} from "./errors.ts";
import { type PixelFormat, type RgbxImage, supportedFormat, toRgbx } from "./pixels.ts";

// node-x11 ships no type declarations; these describe only the requests, extension and setup data used here.

type ReplyCallback<T> = (error: Error | null | undefined, value: T) => boolean;

/** A MIT-SHM segment node-x11 created (an unlinked file in /dev/shm) and attached to the server by descriptor. */
interface ShmSegment {
  /** What readback copied out of the segment: GetImage fills it before calling back. */
  buffer: Buffer;
  size: number;
  getImage(
    drawable: number,
    x: number,
    y: number,
    width: number,
    height: number,
    planeMask: number,
    format: number,
    offset: number,
    callback: ReplyCallback<{ size: number }>,
  ): void;
  detach(): void;
}

interface ShmExtension {
  createSegment(size: number, callback: (error: Error | null, segment: ShmSegment) => void): void;
}

interface ScreenRequests {
  GetGeometry(drawable: number, callback: ReplyCallback<{ width: number; height: number }>): void;
  /** format 2: ZPixmap. `data` is the image, rows padded to the format's scanline pad. */
  GetImage(
    format: number,
    drawable: number,
    x: number,
    y: number,
    width: number,
    height: number,
    planeMask: number,
    callback: ReplyCallback<{ data: Buffer }>,
  ): void;
  require(extension: "shm", callback: (error: Error | null | undefined, extension: ShmExtension) => void): void;
  display: {
    /** 0 LSBFirst, 1 MSBFirst. */
    image_byte_order: number;
    format: Record<number, { bits_per_pixel: number; scanline_pad: number }>;
    screen: {
      pixel_width: number;
      pixel_height: number;
      root_depth: number;
      root_visual: number;
      depths: Record<
        number,
        Record<number, { class: number; red_mask: number; green_mask: number; blue_mask: number }>
      >;
    }[];
  };
}

const Z_PIXMAP = 2;
const ALL_PLANES = 0xffffffff;
const TRUE_COLOR = 4;
const DIRECT_COLOR = 5;

/** The root window's pixel layout, from the connection setup. */
function pixelFormat(raw: ScreenRequests): PixelFormat {
  const screen = raw.display.screen[0];
  const depth = screen?.root_depth ?? 0;
  const visual = screen?.depths[depth]?.[screen.root_visual];
  const layout = raw.display.format[depth];
  if (!visual || !layout || (visual.class !== TRUE_COLOR && visual.class !== DIRECT_COLOR)) {
    throw new ScreenUnavailableError(`the X screen's visual (depth ${depth}) is not TrueColor: cannot capture it`);
  }
  const format: PixelFormat = {
    bitsPerPixel: layout.bits_per_pixel,
    scanlinePad: layout.scanline_pad,
    msbFirst: raw.display.image_byte_order === 1,
    redMask: visual.red_mask,
    greenMask: visual.green_mask,
    blueMask: visual.blue_mask,
  };
  if (!supportedFormat(format)) {
    throw new ScreenUnavailableError(`the X screen's pixel format (${format.bitsPerPixel} bits) is not supported`);
  }
  return format;
}

/** Bytes of a ZPixmap image of this size: rows padded to the scanline pad. */
function imageBytes(size: ScreenSize, format: PixelFormat): number {
  const stride = Math.ceil((size.width * format.bitsPerPixel) / format.scanlinePad) * (format.scanlinePad / 8);
  return stride * size.height;
}

function sameSize(a: ScreenSize, b: ScreenSize): boolean {
  return a.width === b.width && a.height === b.height;
}

interface ScreenConnection {
  connection: X11Connection;
  raw: ScreenRequests;
  format: PixelFormat;
  /** The root window's size as last seen: at the connection's setup, then with every capture. */
  size: ScreenSize;
  /** Undefined when the server or the connection cannot share memory: images come over the socket. */
  shm: ShmExtension | undefined;
  /** Segments no capture is using, each large enough for the whole screen when it was made. */
  idle: ShmSegment[];
}

/** An image taken, and the release of the memory it is in (a shared segment goes back to the pool). */
interface Taken {
  image: RgbxImage;
  release(): void;
}

/**
 * The X display's screen, read with GetImage over one X connection of its own (not the keyboard's:
 * a screenshot's megabytes must not delay a key press behind them). The connection is opened at
 * the first capture, kept, and opened again at the next capture after it was lost.
 *
 * Images come through MIT-SHM where the server allows it (a local Xvfb does): the server writes the
 * pixels into a shared segment and the agent reads them out with one pread, about half the time of
 * receiving 4 bytes a pixel over the socket, and into the same buffer every time, where megabytes of
 * fresh socket chunks per screenshot would bring a full garbage collection every few screenshots.
 * Elsewhere (a remote display, no /dev/shm) core GetImage brings them over the socket; BIG-REQUESTS
 * is off on the connection (X11Connection), which limits requests, not replies.
 */
export class XScreen {
  readonly #display: string;
  #current: Promise<ScreenConnection> | undefined;

  constructor(display: string) {
    this.#display = display;
  }

  /**
   * Takes the whole screen, or the region of it, and hands it to `use`; the image's memory is reused
   * once `use` has settled. Rejects with RegionOutsideScreenError when the region does not fit.
   */
  async capture<T>(region: Region | undefined, use: (image: RgbxImage) => Promise<T>): Promise<T> {
    const taken = await this.#take(region);
    try {
      return await use(taken.image);
    } finally {
      taken.release();
    }
  }

  async #take(region: Region | undefined): Promise<Taken> {
    try {
      return await this.#takeOnce(region);
    } catch (error) {
      // A capture reads and changes nothing: one that failed because the X server went away (restarted)
      // is taken again on a new connection.
      if (!(error instanceof X11ConnectionLostError)) throw error;
      try {
        return await this.#takeOnce(region);
      } catch (again) {
        if (again instanceof X11ConnectionLostError) {
          throw new ScreenUnavailableError(`the X display ${this.#display} cannot be read: ${again.message}`, {
            cause: again,
          });
        }
        throw again;
      }
    }
  }

  async #takeOnce(region: Region | undefined): Promise<Taken> {
    const current = await this.#connection();
    const { connection, raw, format } = current;
    for (;;) {
      const screen = current.size;
      const area = region ?? { x: 0, y: 0, width: screen.width, height: screen.height };
      const problem = regionProblem(area, screen);
      const segment = problem ? undefined : await this.#segment(current, imageBytes(screen, format));
      const release = () => {
        if (segment) current.idle.push(segment);
      };
      // Sent with every capture, just before the GetImage and answered with it (no round trip of its
      // own): the screen can be resized (RandR) while the connection lives.
      const geometry = request<ScreenSize>(connection, (done) => raw.GetGeometry(connection.root, done)).then(
        ({ width, height }) => ({ width, height }),
      );
      if (problem) {
        current.size = await geometry;
        if (sameSize(current.size, screen)) throw new RegionOutsideScreenError(problem);
        continue;
      }
      const { x, y, width, height } = area;
      const image = segment
        ? request<{ size: number }>(connection, (done) =>
            segment.getImage(connection.root, x, y, width, height, ALL_PLANES, Z_PIXMAP, 0, done),
          ).then(({ size }) => segment.buffer.subarray(0, size))
        : request<{ data: Buffer }>(connection, (done) =>
            raw.GetImage(Z_PIXMAP, connection.root, x, y, width, height, ALL_PLANES, done),
          ).then(({ data }) => data);
      // Both settle before either is looked at, so that no rejection is left unhandled.
      const [sized, taken] = await Promise.allSettled([geometry, image]);
      if (sized.status === "rejected" || taken.status === "rejected" || !sameSize(sized.value, screen)) release();
      if (sized.status === "rejected") throw sized.reason;
      current.size = sized.value;
      // Resized meanwhile: taken again against the new size.
      if (!sameSize(current.size, screen)) continue;
      if (taken.status === "rejected") throw taken.reason;
      return { image: toRgbx(taken.value, width, height, format), release };
    }
  }

  /**
   * An idle shared segment of at least `bytes`, a new one when none is (the pool grows to the number of
   * captures that overlap), or undefined when the connection cannot share memory.
   */
  async #segment(current: ScreenConnection, bytes: number): Promise<ShmSegment | undefined> {
    const { shm } = current;
    if (!shm) return undefined;
    const segment = current.idle.pop();
    if (segment && segment.size >= bytes) return segment;
    // Made for a smaller screen before a resize.
    segment?.detach();
    try {
      return await new Promise<ShmSegment>((resolve, reject) =>
        shm.createSegment(bytes, (error, created) => (error ? reject(error) : resolve(created))),
      );
    } catch {
      if (current.connection.lost) throw current.connection.lost;
      // The server refused the segment (no MIT-SHM 1.2 with descriptors, a full /dev/shm): images come
      // over the socket on this connection from now on.
      current.shm = undefined;
      return undefined;
    }
  }

  #connection(): Promise<ScreenConnection> {
    const current = this.#current;
    if (current) return current;
    const opening = X11Connection.open(this.#display).then(
      async (connection) => {
        // Segments are the server's to unmap when the connection closes, and their descriptors close
        // with the process: after a loss they are only forgotten.
        connection.onLost(() => {
          if (this.#current === opening) this.#current = undefined;
        });
        const raw = connection.raw as unknown as ScreenRequests;
        try {
          const screen = raw.display.screen[0];
          const size = { width: screen?.pixel_width ?? 0, height: screen?.pixel_height ?? 0 };
          const format = pixelFormat(raw);
          const shm = await new Promise<ShmExtension | undefined>((resolve) =>
            raw.require("shm", (error, extension) => resolve(error ? undefined : extension)),
          );
          return { connection, raw, format, size, shm, idle: [] };
        } catch (error) {
          void connection.close();
          throw error;
        }
      },
      (error: unknown) => {
        throw new ScreenUnavailableError(
          `cannot connect to the X display ${this.#display}: ${(error as Error).message}`,
          { cause: error },
        );
      },
    );
    // A failed open is not kept: the next capture tries again.
    opening.catch(() => {
      if (this.#current === opening) this.#current = undefined;
    });
    this.#current = opening;
    return opening;
  }
}

/** One request with a reply on the connection; rejects with X11ConnectionLostError when the connection is lost first. */
function request<T>(connection: X11Connection, issue: (done: ReplyCallback<T>) => void): Promise<T> {
  const lost = connection.lost;
  if (lost) return Promise.reject(lost);
  return new Promise<T>((resolve, reject) => {
    const onLost = () => reject(connection.lostSignal.reason);
    connection.lostSignal.addEventListener("abort", onLost, { once: true });
    issue((error, value) => {
      connection.lostSignal.removeEventListener("abort", onLost);
      if (error) reject(error);
      else resolve(value);
      // Tells node-x11 the error was handled, so it does not emit it as well.
      return true;
    });
  });
}
