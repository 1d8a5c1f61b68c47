/**
 * @module Syntax rules of Kubernetes names, label keys and label values.
 * Used by tests and by sync code that must never emit an invalid object.
 */

export const LABEL_NAME_MAX = 63;
export const DNS_SUBDOMAIN_MAX = 253;

/** A non-empty label value, and the name part of a label key: alphanumerics with inner `-_.` (length checked apart). */
export const LABEL_NAME_PATTERN = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** True when `value` is a valid label value (empty, or ≤ 63 alphanumerics with inner `-_.`). */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= LABEL_NAME_MAX && LABEL_NAME_PATTERN.test(value));
}

/** True when `key` is a valid qualified label key: optional DNS-subdomain prefix, `/`, name ≤ 63. */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const name = slash === -1 ? key : key.slice(slash + 1);
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  if (prefix !== undefined && !isDnsSubdomain(prefix)) return false;
  return name.length <= LABEL_NAME_MAX && LABEL_NAME_PATTERN.test(name);
}

/** True for an RFC 1123 DNS subdomain (object names of most kinds). */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= DNS_SUBDOMAIN_MAX && DNS_SUBDOMAIN_PATTERN.test(name);
}

/** True for an RFC 1123 DNS label (namespace names, single name segments). */
export function isDnsLabel(name: string): boolean {
  return name.length <= LABEL_NAME_MAX && DNS_LABEL_PATTERN.test(name);
}
