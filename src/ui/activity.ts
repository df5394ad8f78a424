/**
 * When the user last did something with our UI. Work that can wait (the panel's details) waits for a
 * pause: on 2 cores it would take the CPU from drawing what the user just asked for. pi writing is
 * not user activity, so streaming never holds the details back.
 */

import type { UserActivity } from "../services";

export const USER_PAUSE_MS = 1000;

export class UserActivityClock implements UserActivity {
  private last = Number.NEGATIVE_INFINITY;

  note(): void {
    this.last = Date.now();
  }

  /** ms; ≤ 0: paused now. */
  pauseIn(): number {
    return this.last + USER_PAUSE_MS - Date.now();
  }
}
