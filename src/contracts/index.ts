/**
 * @module src/contracts: what several processes must agree on, pure and in one place — the
 * manufacturer table. The hook server's controllers, the admission checker and the node agent each
 * read it; none of them owns it, so it lives below all of them and imports only src/k8s (the wire
 * types). Anything here that two processes read differently would be a bug between them.
 */
export * from './manufacturers.js';
