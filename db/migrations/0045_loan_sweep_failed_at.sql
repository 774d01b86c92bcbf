-- The overdue/default sweep reads the due loans with the earliest due_at, 100 a page. A loan whose sweep threw stayed
-- first in line on every page of every run (the failures were only left out after the page was read), so 100 such
-- loans would stop the sweep of every other loan, live ones included. A failed loan is now marked (unix ms, the
-- system clock) and left out of the pages for a few minutes, so the rest are swept and it is tried again later.
ALTER TABLE loans ADD COLUMN sweep_failed_at INTEGER;
