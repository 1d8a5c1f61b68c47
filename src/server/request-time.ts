/** @module The request time handed to sync functions as `now`. */
import { rfc3339Seconds } from '../k8s/index.js';

/** The request time at whole seconds, formatted once per second rather than once per call. */
export class RequestTime {
  readonly #clock: () => Date;
  #second = Number.NaN;
  #text = '';

  constructor(clock: () => Date = () => new Date()) {
    this.#clock = clock;
  }

  now(): string {
    const time = Math.floor(this.#clock().getTime() / 1000);
    if (time !== this.#second) {
      this.#second = time;
      this.#text = rfc3339Seconds(new Date(time * 1000));
    }
    return this.#text;
  }
}
