/**
 * The platform wheel's tag, read from the executable it carries (scripts/build-python.ts): pip installs a wheel only
 * where its tag says the executable runs, so the tag is what the executable itself needs, never less.
 */
import { describe, expect, it } from 'vitest';
import { glibcNeeded, macosMinimum, wheelTag } from '../../scripts/build-python.js';

/** A 64-bit Mach-O header with one load command: LC_BUILD_VERSION (minos) or LC_VERSION_MIN_MACOSX (version). */
function machO(cmd: 0x32 | 0x24, major: number, minor: number): Buffer {
  const buf = Buffer.alloc(32 + 24);
  buf.writeUInt32LE(0xfeedfacf, 0);
  buf.writeUInt32LE(1, 16); // ncmds
  buf.writeUInt32LE(24, 20); // sizeofcmds
  buf.writeUInt32LE(cmd, 32);
  buf.writeUInt32LE(24, 36);
  const version = (major << 16) | (minor << 8);
  if (cmd === 0x32) {
    buf.writeUInt32LE(1, 40); // platform: macOS
    buf.writeUInt32LE(version, 44);
  } else buf.writeUInt32LE(version, 40);
  return buf;
}

describe('the platform wheel tag', () => {
  it('Linux: manylinux for the newest glibc symbol version the executable names; musllinux without glibc', () => {
    const elf = Buffer.from('\x7fELF....GLIBC_2.2.5\0GLIBC_2.17\0GLIBC_2.28\0GLIBC_2.3.4\0GLIBC_PRIVATE\0', 'latin1');
    expect(glibcNeeded(elf)).toBe(28);
    expect(wheelTag(elf, 'linux', 'x64')).toBe('py3-none-manylinux_2_28_x86_64');
    expect(wheelTag(elf, 'linux', 'arm64')).toBe('py3-none-manylinux_2_28_aarch64');
    expect(wheelTag(Buffer.from('\x7fELF ld-musl-x86_64.so.1', 'latin1'), 'linux', 'x64')).toBe('py3-none-musllinux_1_2_x86_64');
  });

  it('macOS: the Mach-O minimum; from macOS 11 on a minimum past .0 is the next major (pip matches majors only)', () => {
    expect(macosMinimum(machO(0x32, 13, 5))).toEqual([13, 5]);
    expect(wheelTag(machO(0x32, 11, 0), 'darwin', 'arm64')).toBe('py3-none-macosx_11_0_arm64');
    expect(wheelTag(machO(0x32, 13, 5), 'darwin', 'arm64')).toBe('py3-none-macosx_14_0_arm64');
    expect(wheelTag(machO(0x24, 10, 15), 'darwin', 'x64')).toBe('py3-none-macosx_10_15_x86_64');
    expect(() => wheelTag(Buffer.from('not a Mach-O'), 'darwin', 'x64')).toThrow(/no wheel tag for a darwin-x64 executable/);
  });

  it('Windows, and a platform with no tag', () => {
    expect(wheelTag(Buffer.alloc(0), 'win32', 'x64')).toBe('py3-none-win_amd64');
    expect(wheelTag(Buffer.alloc(0), 'win32', 'arm64')).toBe('py3-none-win_arm64');
    expect(() => wheelTag(Buffer.alloc(0), 'freebsd', 'x64')).toThrow(/no wheel tag/);
  });
});
