/**
 * Credentials inside URLs, kept out of every message tapedeck prints: the password of `scheme://user:password@host`
 * (a store URL, an OTLP endpoint) and the value of any query parameter named as a credential (`password=`, and the
 * names the tape redacts: `key=`, `api-key=`, `subscription-key=`, `access_token=`, `sig=`, ...; see
 * `secret-query.ts`) become `***`. One helper for every URL a message may carry, so no command prints one its own way.
 */
import { isSecretQueryName } from './secret-query.js';

/**
 * `text` with the password of every URL in it replaced by `***` (the user name stays: it says who connects), and
 * every credential query parameter's value. Works on a URL alone or on a message that quotes one, valid or not (a
 * password may hold `@`: the last one ends it).
 */
export function redactUrlCredentials(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s"]*:)[^/?#\s"]*@/gi, '$1***@')
    .replace(/([?&])([^=&#\s"?]+)=([^&#\s"]*)/g, (m: string, sep: string, name: string, value: string) => {
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // compared as written
      }
      return value !== '' && isSecretQueryName(decoded) ? `${sep}${name}=***` : m;
    });
}

/** A store URL fit to print (the public name of {@link redactUrlCredentials} for store URLs). */
export const redactStoreUrl = redactUrlCredentials;
