/**
 * @module Every limit of the hook server in one place: request size, the memory budget of bodies
 * in flight, and the HTTP timeouts and shutdown drain. The README's HTTP contract quotes these.
 */

const MiB = 1024 * 1024;

/**
 * Largest request body (`--max-body`). Metacontroller sends the scheduling-chain hook every managed
 * Node whole: ~23 KB of JSON per Node as the API server returns it (NFD labels, images,
 * managedFields). 256 MiB holds 10,000 Nodes — the largest cluster we support — with the chain's
 * children and some headroom.
 */
export const DEFAULT_MAX_BODY_BYTES = 256 * MiB;

/**
 * Memory a request costs at its peak per byte of body (the body, its text, the parsed objects and
 * the answer): a little above the peak RSS per body byte that `npm run bench` measures, leaving
 * room for the garbage V8 has not collected.
 */
export const MEMORY_PER_BODY_BYTE = 6;
/** Memory the server needs besides the bodies: what an idle server holds resident, plus V8's slack. */
export const MEMORY_RESERVE_BYTES = 256 * MiB;
/** The memory limit assumed when the container has none: our Deployment's (manifests/server). */
export const ASSUMED_MEMORY_LIMIT_BYTES = 2048 * MiB;
/** The smallest budget, whatever the limit: one mid-sized cluster's request must still get through. */
export const MIN_INFLIGHT_BYTES = 32 * MiB;

/**
 * The bytes of request bodies the server reads and processes at once (`--max-inflight-bytes`),
 * for a container memory limit: what is left after the reserve, over the cost per body byte.
 * @example inflightBudgetFor(2 * 1024 ** 3) // 298.7 MiB: two 5,000-node requests, or one 10,000-node one
 */
export function inflightBudgetFor(memoryLimitBytes: number): number {
  return Math.max(MIN_INFLIGHT_BYTES, Math.floor((memoryLimitBytes - MEMORY_RESERVE_BYTES) / MEMORY_PER_BODY_BYTE));
}

/** The default in-flight budget: that of the assumed limit. */
export const DEFAULT_MAX_INFLIGHT_BYTES = inflightBudgetFor(ASSUMED_MEMORY_LIMIT_BYTES);

/**
 * Bodies longer than this (in characters, about bytes) are parsed and answered one at a time, with
 * a turn of the event loop between phases; shorter ones take milliseconds and are answered at once.
 */
export const SERIAL_ABOVE_CHARACTERS = 1024 * 1024;

/**
 * How deep a request body may nest, counted as `jsonDepth` counts (the body itself is level 1).
 * Objects sit at most 4 levels down (`children` → kind → name → object) and a Kubernetes object
 * nests a dozen levels or so (`managedFields[].fieldsV1` is among the deepest); an observed child's
 * `spec`, 5 levels down, may nest `MAX_ECHOED_DEPTH` (100) levels and gets its own 400 past that.
 * 128 leaves both their room. Past it the body is a 400 before anything walks it: a walk that
 * copies a path per level grows with the square of the depth (100,000 levels held the server for
 * minutes), and the serialisers of the answer recurse.
 */
export const MAX_BODY_DEPTH = 128;

/** Retry-After of a 429 for a full budget: about the time a large request takes to answer. */
export const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * How long an idle keep-alive connection stays open. Metacontroller is a Go client: its idle
 * connections live 90 s (`http.Transport.IdleConnTimeout`). Were the server to close first (Node's
 * default is 5 s), Metacontroller could write a request to a socket the server had just closed and
 * get a reset; above 90 s the client always closes first.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 95_000;
/** Time to receive a request's headers; above the keep-alive timeout, as Node advises. */
export const HEADERS_TIMEOUT_MS = 100_000;
/**
 * Time to receive a whole request, body included: a stalled upload is cut (408) after this. Node
 * requires it at or above the headers timeout; the hooks' own timeouts are 30–60 s.
 */
export const REQUEST_TIMEOUT_MS = 120_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let a stalled request overrun by that much). */
export const CONNECTIONS_CHECK_INTERVAL_MS = 5_000;
/**
 * On SIGTERM the server stops accepting connections and gives the requests in flight this long to
 * finish, then closes every connection left (a stalled client cannot hold the process). Inside
 * Kubernetes' default 30 s grace period; Metacontroller retries what was cut.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 20_000;
/** While draining, connections that went idle after their last answer are closed this often. */
export const DRAIN_IDLE_SWEEP_MS = 250;

/**
 * How often `serve` reads its credential files again (a rotated certificate or token): the kubelet
 * refreshes a mounted Secret within about a minute, so a rotation is in service within ~70 s.
 */
export const CREDENTIALS_POLL_MS = 10_000;
