import { z } from "zod";
import { principalOf } from "../../auth/require-auth.ts";
import { type ApiRouter, pathParam } from "../../http/api-router.ts";
import { abortedWhenClientGone } from "../../http/client-gone.ts";
import { parseInput } from "../../http/validate.ts";
import type { BrowserRouteDeps } from "../routes.ts";
import { captureScreenshot, ScreenshotBody } from "./screenshot.ts";

const PngImage = z.string().meta({ format: "binary" }).describe("The screenshot, PNG-encoded");

export function addScreenRoutes(api: ApiRouter, deps: BrowserRouteDeps): void {
  api.add(
    {
      method: "post",
      path: "/browsers/{id_or_name}/computer/screenshot",
      operationId: "postBrowsersByIdOrNameComputerScreenshot",
      tag: "Browser Computer Controls",
      summary: "Capture a screenshot of the browser's screen, or of a region of it, as PNG",
      body: { schema: ScreenshotBody, required: false },
      response: { status: 200, description: "The PNG image", schema: PngImage, contentType: "image/png" },
      errors: [400, 404, 429, 502, 503, 504],
    },
    async (req, res) => {
      const body = parseInput(ScreenshotBody, req.body ?? {});
      const signal = abortedWhenClientGone(res);
      const png = await captureScreenshot(
        deps,
        principalOf(res),
        pathParam(req, "id_or_name"),
        body,
        String(req.id),
        signal,
      );
      res.status(200).type("image/png").send(png);
    },
  );
}
