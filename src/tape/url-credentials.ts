/**
 * Credentials inside URLs, kept out of every message tapedeck prints: the password of `scheme://user:password@host`
 * (a store URL, an OTLP endpoint) and any `password=` parameter become `***`. One helper for every URL a message
 * may carry, so no command prints one its own way.
 */

/**
 * `text` with the password of every URL in it replaced by `***` (the user name stays: it says who connects). Works on
 * a URL alone or on a message that quotes one, valid or not (a password may hold `@`: the last one ends it).
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s"]*:)[^/?#\s"]*@/gi, '$1***@').replace(/([?&]password=)[^&#\s"]*/gi, '$1***');
}

/** A store URL fit to print (the public name of {@link redactUrlCredentials} for store URLs). */
export const redactStoreUrl = redactUrlCredentials;
