/**
 * The Dockerfile, where a Docker daemon answers (none on the machines this project's CI uses today: then it skips,
 * saying so): the image builds from this checkout (its first stage makes the single executable) and its tapedeck,
 * with no Node.js in the image, prints the release's version and records by default.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const daemon = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 30_000 }).status === 0;

describe.skipIf(!daemon)('the Docker image', () => {
  it('builds, holds no Node.js, and its tapedeck prints the version', { timeout: 1_200_000 }, () => {
    const image = `tapedeck-test-${process.pid}`;
    try {
      const build = spawnSync('docker', ['build', '-q', '-t', image, '.'], { cwd: ROOT, encoding: 'utf8', timeout: 1_100_000 });
      expect(build.status, build.stderr).toBe(0);
      const version = spawnSync('docker', ['run', '--rm', image, '--version'], { encoding: 'utf8', timeout: 60_000 });
      expect(version.stdout.trim(), version.stderr).toBe(VERSION);
      const node = spawnSync('docker', ['run', '--rm', '--entrypoint', 'sh', image, '-c', 'command -v node || echo none'], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(node.stdout.trim()).toBe('none');
      const cmd = spawnSync('docker', ['image', 'inspect', '--format', '{{json .Config.Cmd}}', image], { encoding: 'utf8' });
      expect(JSON.parse(cmd.stdout)).toEqual(['record', '--tape', 'session', '--append', '--host', '0.0.0.0']);
    } finally {
      spawnSync('docker', ['rmi', '-f', image], { stdio: 'ignore' });
    }
  });
});
if (!daemon) it.skip('no Docker daemon answers here: the Dockerfile test is skipped', () => undefined);
