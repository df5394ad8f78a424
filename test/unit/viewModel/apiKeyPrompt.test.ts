import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { apiKeyPrompt } from "../../../src/viewModel/apiKeyPrompt";

describe("the API-key box's prompt", () => {
  it("says why a key is asked for; with no pi found (auto), that no pi was found, where we looked and how to point at one", () => {
    const plain = apiKeyPrompt({ reason: "missing", origin: "https://api.openai.com" });
    assert.equal(
      plain,
      "The summarizer at https://api.openai.com needs an API key. Enter the key to continue; it is kept in VS Code's secret storage, never in settings. Escape cancels: nothing is sent.",
    );
    const noPi = apiKeyPrompt({
      reason: "missing",
      origin: "https://api.openai.com",
      noPiLookedAt: ["the PATH", "the login shell's PATH"],
    });
    assert.ok(
      noPi.startsWith(
        "No pi was found to summarize with your own model and key (looked at the PATH, the login shell's PATH); to use your pi, set piContext.pi.path — in User settings; in a remote window or code-server, in Remote settings or the workspace's settings;",
      ),
      noPi,
    );
    assert.ok(noPi.endsWith(plain), "then the same explanation");
    assert.match(
      apiKeyPrompt({ reason: "rejected", origin: "http://127.0.0.1:9", detail: "HTTP 401" }),
      /^The summarizer at http:\/\/127\.0\.0\.1:9 refused the request \(HTTP 401\)\. Enter the key/,
    );
  });
});
