import { createRequire } from "node:module";

export interface ScreenSize {
  width: number;
  height: number;
}

// node-x11 ships no type declarations; this covers the little used here.
interface SetupScreen {
  pixel_width: number;
  pixel_height: number;
}

interface RawClient {
  on(event: "error", listener: (error: Error) => void): void;
  // Absent when the connection failed before a socket existed.
  stream: { destroy(): void } | undefined;
}

interface X11Module {
  createClient(
    options: { display: string },
    callback: (error: Error | undefined, display: { screen: SetupScreen[] }) => void,
  ): RawClient;
}

const x11 = createRequire(import.meta.url)("x11") as X11Module;

const TIMEOUT_MS = 2_000;

/** ":1" and ":1.0" mean screen 0; ":1.2" screen 2. */
function screenNumber(display: string): number {
  const match = /\.(\d+)$/.exec(display);
  return match ? Number(match[1]) : 0;
}

/**
 * The size of the display's root window, read from the setup a fresh X connection receives, which
 * the server keeps current when the screen is resized (RandR). A connection of its own, closed at
 * once, so this never touches the keyboard's connection.
 */
export function readScreenSize(display: string): Promise<ScreenSize> {
  return new Promise((resolve, reject) => {
    let client: RawClient | undefined;
    const timer = setTimeout(() => {
      client?.stream?.destroy();
      reject(new Error(`X server ${display} did not complete the setup within ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    const finish = (error: Error | undefined, size?: ScreenSize) => {
      clearTimeout(timer);
      client?.stream?.destroy();
      if (error || !size) reject(error ?? new Error(`X server ${display} reported no screen`));
      else resolve(size);
    };
    try {
      client = x11.createClient({ display }, (error, setup) => {
        const screen = setup?.screen[screenNumber(display)];
        finish(error, screen && { width: screen.pixel_width, height: screen.pixel_height });
      });
      // Without a listener node-x11 throws socket errors at the process.
      client.on("error", (error) => finish(error));
    } catch (error) {
      finish(error as Error);
    }
  });
}
