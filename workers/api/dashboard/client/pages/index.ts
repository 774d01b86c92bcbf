import type { Page } from "../context.ts";
import { borrowerPage } from "./borrower.ts";
import { borrowersPage } from "./borrowers.ts";
import { configurationPage } from "./configuration.ts";
import { developersPage } from "./developers.ts";
import { goLivePage } from "./go-live.ts";
import { homePage } from "./home.ts";
import { loanPage } from "./loan.ts";
import { loansPage } from "./loans.ts";
import { notificationsPage } from "./notifications.ts";
import { programsPage } from "./programs.ts";
import { reviewPage } from "./review.ts";
import { settlementsPage } from "./settlements.ts";
import { teamPage } from "./team.ts";

/** Every signed-in page, in the navigation's order. */
export const PAGES: Page[] = [
  homePage,
  loansPage,
  loanPage,
  reviewPage,
  borrowersPage,
  borrowerPage,
  settlementsPage,
  notificationsPage,
  configurationPage,
  programsPage,
  developersPage,
  teamPage,
  goLivePage,
];
