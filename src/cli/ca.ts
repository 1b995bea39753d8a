import { defaultCaDir, loadOrCreateCa } from '../front/ca.js';
import type { Command } from './shared/command.js';

export const caCommand: Command = {
  name: 'ca',
  summary: 'show (creating it once) or regenerate the local CA that HTTPS through the forward proxy is intercepted with',
  usage: [
    'tapedeck ca [--regenerate] [--pem]',
    '',
    '  --regenerate  replace the CA with a new one (clients that trusted the old one must trust the new one)',
    '  --pem         print the CA certificate (PEM) on stdout, to add to a trust store',
    '',
    'The CA lives in $TAPEDECK_CA_DIR, else $XDG_CONFIG_HOME/tapedeck, else ~/.config/tapedeck; its private key',
    'is readable by you only. Wrapper mode (record|replay -- COMMAND) makes the command trust it.',
  ].join('\n'),
  options: { regenerate: { type: 'boolean' }, pem: { type: 'boolean' } },
  run(ctx) {
    const ca = loadOrCreateCa(defaultCaDir(ctx.env), { regenerate: ctx.values.regenerate === true });
    if (ctx.values.pem === true) {
      ctx.stdout.write(ca.certPem);
      return Promise.resolve(0);
    }
    const what = ctx.values.regenerate === true ? 'regenerated' : ca.created ? 'created' : 'existing';
    ctx.stdout.write(
      [
        `certificate  ${ca.certPath} (${what})`,
        `private key  ${ca.keyPath} (readable by you only)`,
        `sha-256      ${ca.fingerprint}`,
        '',
      ].join('\n'),
    );
    return Promise.resolve(0);
  },
};
