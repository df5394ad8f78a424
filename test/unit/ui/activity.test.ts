/**
 * `UserActivityClock` (src/ui/activity.ts): `pauseIn()` counts down from each `note()` to a pause of
 * `USER_PAUSE_MS`; before any activity the user has paused.
 */

import { strict as assert } from "node:assert";
import { describe, it, mock } from "node:test";
import { USER_PAUSE_MS, UserActivityClock } from "../../../src/ui/activity";

describe("UserActivityClock", () => {
  it("has paused before the user did anything", () => {
    assert.ok(new UserActivityClock().pauseIn() <= 0);
  });

  it("counts down from the last activity, and each activity starts it again", () => {
    mock.timers.enable({ apis: ["Date"], now: 1_000_000 });
    try {
      const activity = new UserActivityClock();
      activity.note();
      assert.equal(activity.pauseIn(), USER_PAUSE_MS);
      mock.timers.tick(400);
      assert.equal(activity.pauseIn(), USER_PAUSE_MS - 400);
      activity.note();
      assert.equal(activity.pauseIn(), USER_PAUSE_MS, "a new activity restarts the wait");
      mock.timers.tick(USER_PAUSE_MS);
      assert.equal(activity.pauseIn(), 0, "paused exactly USER_PAUSE_MS after the last activity");
      mock.timers.tick(1);
      assert.ok(activity.pauseIn() < 0);
    } finally {
      mock.timers.reset();
    }
  });
});
