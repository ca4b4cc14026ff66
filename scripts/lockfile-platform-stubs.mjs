#!/usr/bin/env node
/**
 * Adds package-lock.json entries for platform-specific optional dependencies that the lock
 * lacks (e.g. @swc/core-darwin-arm64), so that `npm ci` accepts the lock (npm ≥ 11.6 refuses
 * a lock that misses them: "Missing: @swc/core-darwin-arm64@ from lock file"). The registry
 * reachable here does not serve other platforms' binaries, so `npm install` cannot record them;
 * the stubs carry version, os, cpu and libc, which is all npm needs to skip them on Linux.
 *
 *   node scripts/lockfile-platform-stubs.mjs          # fix package-lock.json in place
 *   node scripts/lockfile-platform-stubs.mjs --check  # exit 1 if stubs are missing
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const pkgs = lock.packages;
const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPU = ['arm64', 'x64', 'ia32', 'ppc64', 's390x', 'loong64', 'riscv64', 'arm'];

const missing = [];
for (const [key, entry] of Object.entries(pkgs)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    if (pkgs[`node_modules/${name}`] || pkgs[`${key}/node_modules/${name}`]) continue;
    if (!/^\d+\.\d+\.\d+/.test(spec)) continue; // only exact pins can be stubbed safely
    const parts = name.split('/').pop().split('-');
    const stub = { version: spec, optional: true };
    const cpu = CPU.find((c) => parts.includes(c) || (c === 'arm' && parts.some((p) => p.startsWith('arm') && p !== 'arm64')));
    const os = OS.find((o) => parts.includes(o));
    if (cpu) stub.cpu = [cpu];
    if (os) stub.os = [os];
    if (parts.some((p) => p.startsWith('musl'))) stub.libc = ['musl'];
    else if (os === 'linux' && parts.includes('gnu')) stub.libc = ['glibc'];
    missing.push([`node_modules/${name}`, stub]);
  }
}

if (process.argv.includes('--check')) {
  if (missing.length) {
    console.error(
      `package-lock.json lacks ${missing.length} platform entries (${missing
        .slice(0, 3)
        .map(([k]) => k.slice(13))
        .join(', ')}…); run node scripts/lockfile-platform-stubs.mjs`,
    );
    process.exit(1);
  }
  process.exit(0);
}
for (const [k, stub] of missing) pkgs[k] = stub;
const sorted = Object.keys(pkgs).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en')));
lock.packages = Object.fromEntries(sorted.map((k) => [k, pkgs[k]]));
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${missing.length} stub entries to package-lock.json`);
