import { describe, expect, it } from "vitest";
import { loggedUrl, maskApiKeys } from "../../src/http/log-redaction.ts";

// Shaped like a key createApiKey makes: sk_ and 43 base64url characters.
const KEY = "sk_Zm9vYmFyYmF6cXV4LWtleS1mb3ItdGVzdHMtb25seQ_";

describe("loggedUrl", () => {
  it("leaves a URL without secrets exactly as sent", () => {
    for (const url of ["/healthz", "/proxies?limit=5&offset=10&name=a%20b", "/browsers/x/fs/file_info?path=/tmp&x"]) {
      expect(loggedUrl(url)).toBe(url);
    }
  });

  it("redacts the values of query parameters whose names say they are secrets", () => {
    expect(loggedUrl("/proxies?token=t&access_token=a&api_key=k&X-Api-Key=x&password=p&passwd=q&client_secret=s")).toBe(
      "/proxies?token=[redacted]&access_token=[redacted]&api_key=[redacted]&X-Api-Key=[redacted]" +
        "&password=[redacted]&passwd=[redacted]&client_secret=[redacted]",
    );
    expect(loggedUrl("/x?Authorization=Bearer%20abc&oauth_signature=s&sig=1&limit=2")).toBe(
      "/x?Authorization=[redacted]&oauth_signature=[redacted]&sig=[redacted]&limit=2",
    );
  });

  it("knows a secret name however it is spelled or encoded", () => {
    expect(loggedUrl("/x?API-KEY=1&api%5Fkey=2&Api.Key=3")).toBe(
      "/x?API-KEY=[redacted]&api%5Fkey=[redacted]&Api.Key=[redacted]",
    );
  });

  it("redacts anything shaped like an API key, wherever it is in the URL", () => {
    expect(loggedUrl(`/browsers/${KEY}/fs/file_info?path=/&note=${KEY}&${KEY}`)).toBe(
      "/browsers/[redacted]/fs/file_info?path=/&note=[redacted]&[redacted]",
    );
    expect(loggedUrl(`/proxies?name=${encodeURIComponent(KEY).replace("_", "%5F")}`)).toBe("/proxies?name=[redacted]");
  });

  it("keeps a URL whose percent-encoding is broken readable", () => {
    expect(loggedUrl("/proxies?name=%zz&token=%zz")).toBe("/proxies?name=%zz&token=[redacted]");
  });
});

describe("maskApiKeys", () => {
  it("masks a whole key, a key cut short, and a key run into other text", () => {
    expect(maskApiKeys(KEY)).toBe("[redacted]");
    expect(maskApiKeys(KEY.slice(0, 30))).toBe("[redacted]");
    expect(maskApiKeys(`id:${KEY}`)).toBe("id:[redacted]");
  });

  it("leaves the shown prefix of a key and words that merely contain sk_", () => {
    expect(maskApiKeys(KEY.slice(0, 10))).toBe(KEY.slice(0, 10));
    expect(maskApiKeys("task_with_a_rather_long_name_indeed")).toBe("task_with_a_rather_long_name_indeed");
  });
});
