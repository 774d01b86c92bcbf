import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * How an endpoint of the chaos receiver answers. The faulty ones fail the
 * first `failFirst` attempts of each event (all of them when unset) and
 * succeed after, so "delivered" stays measurable; `gone` and `redirect`
 * never succeed (the delivery must end FAILED after exactly 3 attempts).
 */
export type Behaviour =
  | { kind: "ok" }
  /** Answers 200 after `ms` (under the delivery timeout). */
  | { kind: "slow"; ms: number }
  | { kind: "error500"; failFirst?: number }
  /** Never answers: only the delivery's own timeout ends the attempt. */
  | { kind: "timeout"; failFirst?: number }
  /** Destroys the connection without an answer. */
  | { kind: "reset"; failFirst?: number }
  | { kind: "gone" }
  /** 302 to the `ok` endpoint: not followed, so a failed attempt. */
  | { kind: "redirect" };

export type Arrival = { eventId: string; type: string; at: number; attempt: number; answered: number };

export type Receiver = {
  /** The URL of the endpoint at `path` (e.g. "/ok"), answering as `behaviour`. */
  endpoint(path: string, behaviour: Behaviour): string;
  /** Every request received at `path`, in order. */
  arrivals(path: string): Arrival[];
  /** Successful (2xx) arrivals at `path` by event id: the first time each event was delivered. */
  delivered(path: string): Map<string, number>;
  close(): Promise<void>;
};

/** A local webhook receiver (node:http, so it can reset connections), on a free port. */
export async function startReceiver(): Promise<Receiver> {
  const behaviours = new Map<string, Behaviour>();
  const log = new Map<string, Arrival[]>();
  const seen = new Map<string, number>(); // `${path}:${eventId}` → requests so far

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const behaviour = behaviours.get(path) ?? { kind: "gone" };
      let envelope: { id?: string; type?: string } = {};
      try {
        envelope = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        /* not an envelope */
      }
      const eventId = envelope.id ?? "?";
      const n = (seen.get(`${path}:${eventId}`) ?? 0) + 1;
      seen.set(`${path}:${eventId}`, n);
      const record = (answered: number) => {
        const list = log.get(path) ?? [];
        list.push({ eventId, type: envelope.type ?? "?", at: Date.now(), attempt: Number(req.headers["x-svc-attempt"] ?? 0), answered });
        log.set(path, list);
      };
      const failing = (failFirst?: number) => failFirst === undefined || n <= failFirst;
      switch (behaviour.kind) {
        case "ok":
          record(200);
          return res.writeHead(200).end("ok");
        case "slow":
          return void setTimeout(() => {
            record(200);
            res.writeHead(200).end("ok");
          }, behaviour.ms);
        case "error500":
          if (failing(behaviour.failFirst)) return record(500), res.writeHead(500).end("boom");
          record(200);
          return res.writeHead(200).end("ok");
        case "timeout":
          if (failing(behaviour.failFirst)) return record(0); // never answered
          record(200);
          return res.writeHead(200).end("ok");
        case "reset":
          if (failing(behaviour.failFirst)) return record(-1), req.socket.destroy();
          record(200);
          return res.writeHead(200).end("ok");
        case "gone":
          record(410);
          return res.writeHead(410).end("gone");
        case "redirect":
          record(302);
          return res.writeHead(302, { location: "/ok" }).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint(path, behaviour) {
      behaviours.set(path, behaviour);
      return `http://127.0.0.1:${port}${path}`;
    },
    arrivals: (path) => log.get(path) ?? [],
    delivered(path) {
      const first = new Map<string, number>();
      for (const a of log.get(path) ?? []) if (a.answered === 200 && !first.has(a.eventId)) first.set(a.eventId, a.at);
      return first;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
