-- When a loan's default was recorded (the sweep's time, as `overdue_at` is), beside `defaulted_at`, the moment the
-- terms put it at (`due_at` + the grace period). A default recorded after that moment (a sweep after midnight, a
-- sandbox clock moved on past the grace period) was counted by `GET /v1/stats/today` on the day of `defaulted_at`,
-- when nothing yet showed it, and never on the day `loan.defaulted` fired. NULL for defaults recorded before this:
-- the stats read `defaulted_at` for them.
ALTER TABLE loans ADD COLUMN default_recorded_at INTEGER;
