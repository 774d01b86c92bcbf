/** The slice of `fetch` outbound calls use; tests pass their own. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;
