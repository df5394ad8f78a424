/**
 * When the user last did something with pi-context's UI: a Pi view shown, a tree row expanded,
 * collapsed or selected (Reveal Leaf selects), a panel webview started or sent a message.
 *
 * Work that can wait (the panel's details: what each compaction lost, what each trim suggestion
 * saves — 0.5–1.8 s of the extension host on a 128 MB session) waits until the user has paused for
 * {@link USER_PAUSE_MS}, and pauses between its steps when they come back. On a 2-core machine the
 * CPU such work takes is taken from the workbench drawing what the user just asked for: in
 * `npm run bench:ui` the details computed right after the Pi container opened made the next
 * command's panel open 0.7 s later.
 *
 * Only what the user does counts: a session change (pi writing) does not, so pi streaming never
 * holds the details back (they have their own bound, `DETAILS_MAX_WAIT_MS` in `panel/controller.ts`).
 */

import type { UserActivity } from "../services";

/** The user counts as having paused after this long without activity (ms). */
export const USER_PAUSE_MS = 1000;

/** The time of the user's last activity (one instance, `services.activity`). */
export class UserActivityClock implements UserActivity {
  private last = Number.NEGATIVE_INFINITY;

  /** The user did something just now. */
  note(): void {
    this.last = Date.now();
  }

  /** How long until the user has paused for {@link USER_PAUSE_MS} (ms; ≤ 0: paused now). */
  pauseIn(): number {
    return this.last + USER_PAUSE_MS - Date.now();
  }
}
