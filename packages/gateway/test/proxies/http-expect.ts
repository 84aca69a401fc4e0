import { expect } from "vitest";

export interface ProxyBody {
  type: string;
  id: string;
  name: string;
  protocol: string;
  status?: string;
  ip_address?: string;
  last_checked?: string;
  bypass_hosts: string[];
  config: Record<string, unknown>;
}

export interface ErrorBody {
  code: string;
  message: string;
  details?: { code: string; message: string }[];
}

/** The answer is the Error body with this status and code. */
export async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as ErrorBody;
  expect(body).toMatchObject({ code, message: expect.any(String) });
  return body;
}

/** A 400 bad_request whose only invalid_input detail names `field`. */
export async function expectInvalidInput(res: Response, field: string): Promise<string> {
  const body = await expectError(res, 400, "bad_request");
  expect(body.details).toEqual([{ code: "invalid_input", message: expect.stringMatching(/^.+: .+$/) }]);
  const message = body.details?.[0]?.message ?? "";
  expect(message.slice(0, message.indexOf(": "))).toBe(field);
  return message;
}

export async function expectProxy(res: Response): Promise<ProxyBody> {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as ProxyBody;
}

export function json(method: string, body?: unknown): RequestInit {
  return body === undefined
    ? { method }
    : { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}
