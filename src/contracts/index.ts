/**
 * @module src/contracts: what several processes must agree on, pure and in one place — the
 * manufacturer table (each vendor's device resource), settings resolution (a SchedulingChain spec
 * → settings, and what they mean per manufacturer) and the card (one detected accelerator, as the
 * agent's labels and ResourceSlices both describe it). The hook server's controllers, the
 * admission checker and the node agent each read these; none of them owns them, so they live
 * below all of them and import only src/k8s (the wire types). Before, the checker imported
 * src/sync for the settings and a device resource, and a card had three shapes (the addon's, the
 * labels', the slices'). Anything here that two processes read differently would be a bug
 * between them.
 */
export * from './card.js';
export * from './manufacturers.js';
export * from './settings.js';
