/** What `GET /v1/me` answers a dashboard session (the fields the dashboard reads). */
export type Me = {
  tenant: { id: string; name: string; mode: "sandbox" | "live"; certifiedAt: string | null };
  mode: "sandbox" | "live";
  principal: { kind: "user"; userId: string; email: string; role: "OWNER" | "ADMIN" | "MEMBER" };
  merchantConfigs: { id: string; network: string; stablecoin: string; chain: string; loanProductId: string; [k: string]: unknown }[];
  widgetPrograms: { id: string; name: string; embedKey: string; mode: "sandbox" | "live"; [k: string]: unknown }[];
  emailVerified: boolean;
};

/** Everything a page renders from. */
export type Ctx = {
  me: Me;
  /** The mode the dashboard is looking at (the switch in the header); lists pass it as `mode=`. */
  mode: "sandbox" | "live";
  /** OWNER and ADMIN may act; a MEMBER sees everything read-only (actions are hidden, and the API refuses them anyway: 403). */
  canWrite: boolean;
  /** Path parameters of the page's pattern (`/loans/:id` → `{ id }`). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Goes to a dashboard path (`/loans?status=ACTIVE`), as a link would; `reloadMe`: reading the session's tenant (`GET /v1/me`) again first, after a change it shows (a program created or deleted). */
  navigate(path: string, options?: { reloadMe?: boolean }): void;
  /** Renders the current page again (after an action). */
  refresh(): void;
  /** Reads the session's tenant again (`GET /v1/me`: after certification, a new program…) and renders. */
  reload(): Promise<void>;
  /** The widget host's origin (`{embed_url}`) for previews and snippets, or null when not configured. */
  widgetOrigin: string | null;
};

/** One page of the dashboard. */
export type Page = {
  /** The pattern under /dashboard, e.g. "/loans/:id". */
  path: string;
  title: string;
  /** Shown in the navigation with this label (pages reached from others have none). */
  nav?: string;
  render(ctx: Ctx): Promise<HTMLElement> | HTMLElement;
};
