import type { z } from "zod";
import type { Principal } from "../../auth/api-keys.ts";
import { principalOf } from "../../auth/require-auth.ts";
import { type ApiRouter, pathParam } from "../../http/api-router.ts";
import { abortedWhenClientGone } from "../../http/client-gone.ts";
import { parseInput } from "../../http/validate.ts";
import type { BrowserRouteDeps } from "../routes.ts";
import { type CallMeta, clickMouse, dragMouse, getMousePosition, moveMouse, scroll, typeText } from "./input.ts";
import { inputBodies, MousePosition } from "./schemas.ts";

const TAG = "Browser Computer Controls";
/** The errors every input operation may answer, as press_key does. */
const INPUT_ERRORS = [400, 404, 413, 429, 502, 503, 504] as const;

type InputCall<B> = (
  deps: BrowserRouteDeps,
  principal: Principal,
  idOrName: string,
  body: B,
  meta: CallMeta,
) => Promise<void>;

/** One input operation: POST with a JSON body, answered 200 with an empty body once the X server processed it. */
function addInputRoute<S extends z.ZodType>(
  api: ApiRouter,
  deps: BrowserRouteDeps,
  operation: { path: string; operationId: string; summary: string; schema: S; run: InputCall<z.output<S>> },
): void {
  api.add(
    {
      method: "post",
      path: `/browsers/{id_or_name}/computer/${operation.path}`,
      operationId: operation.operationId,
      tag: TAG,
      summary: operation.summary,
      body: { schema: operation.schema, required: true },
      response: { status: 200, description: "Done once the X server processed every event; empty body" },
      errors: INPUT_ERRORS,
    },
    async (req, res) => {
      const body = parseInput(operation.schema, req.body);
      const signal = abortedWhenClientGone(res);
      await operation.run(deps, principalOf(res), pathParam(req, "id_or_name"), body, {
        requestId: String(req.id),
        signal,
      });
      res.status(200).end();
    },
  );
}

/** The mouse and type_text operations, at the official client's paths. */
export function addInputRoutes(api: ApiRouter, deps: BrowserRouteDeps): void {
  const bodies = inputBodies(deps.maxPressDurationMs);
  addInputRoute(api, deps, {
    path: "move_mouse",
    operationId: "postBrowsersByIdOrNameComputerMoveMouse",
    summary: "Move the mouse cursor to the specified coordinates on the browser instance",
    schema: bodies.MoveMouseBody,
    run: moveMouse,
  });
  addInputRoute(api, deps, {
    path: "click_mouse",
    operationId: "postBrowsersByIdOrNameComputerClickMouse",
    summary: "Simulate a mouse click action on the browser instance",
    schema: bodies.ClickMouseBody,
    run: clickMouse,
  });
  addInputRoute(api, deps, {
    path: "drag_mouse",
    operationId: "postBrowsersByIdOrNameComputerDragMouse",
    summary: "Drag the mouse along a path",
    schema: bodies.DragMouseBody,
    run: dragMouse,
  });
  addInputRoute(api, deps, {
    path: "scroll",
    operationId: "postBrowsersByIdOrNameComputerScroll",
    summary: "Scroll the mouse wheel at a position on the host computer",
    schema: bodies.ScrollBody,
    run: scroll,
  });
  addInputRoute(api, deps, {
    path: "type",
    operationId: "postBrowsersByIdOrNameComputerType",
    summary: "Type text on the browser instance",
    schema: bodies.TypeTextBody,
    run: typeText,
  });

  api.add(
    {
      method: "post",
      path: "/browsers/{id_or_name}/computer/get_mouse_position",
      operationId: "postBrowsersByIdOrNameComputerGetMousePosition",
      tag: TAG,
      summary: "Get the current mouse cursor position on the browser instance",
      response: { status: 200, description: "The cursor's position on the screen", schema: MousePosition },
      errors: [404, 429, 502, 503, 504],
    },
    async (req, res) => {
      const signal = abortedWhenClientGone(res);
      res.json(
        await getMousePosition(deps, principalOf(res), pathParam(req, "id_or_name"), {
          requestId: String(req.id),
          signal,
        }),
      );
    },
  );
}
