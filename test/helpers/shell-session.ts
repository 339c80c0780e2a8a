import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * One bash process that runs many command lines, each as `bash -c` would: in its own bash, with
 * its own environment, stdin empty. A test process that runs the service with its embedded engine
 * takes ~0.6 s to start any process on an idle machine and 1–3 s in CI (forking copies its large
 * address space), while this small shell starts a curl in tens of milliseconds; so a file that runs
 * dozens of documented commands starts one process from the test process, not dozens.
 */
export class ShellSession {
  private readonly shell: ChildProcessWithoutNullStreams;
  private readonly scripts: string;
  private output = '';
  private errors = '';
  private next = 0;
  private pending: { marker: RegExp; resolve: (r: { stdout: string; code: number }) => void; reject: (e: Error) => void } | null = null;
  private exited: Error | null = null;

  /** `cwd`: where every command runs; `env`: the shell's own environment, under each command's. */
  constructor(cwd: string, env: Record<string, string>) {
    this.scripts = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-shell-'));
    this.shell = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: 'pipe' });
    this.shell.stdout.setEncoding('utf8').on('data', (text: string) => {
      this.output += text;
      this.settle();
    });
    this.shell.stderr.setEncoding('utf8').on('data', (text: string) => (this.errors += text));
    this.shell.on('exit', (code) => {
      this.exited = new Error(`the shell exited (${code}): ${this.errors}`);
      this.pending?.reject(this.exited);
      this.pending = null;
    });
  }

  /** Runs `command` with `env` exported; its stdout and exit code. One command at a time. */
  run(command: string, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<{ stdout: string; code: number }> {
    if (this.exited) return Promise.reject(this.exited);
    if (this.pending) return Promise.reject(new Error('one command at a time'));
    const id = this.next++;
    const script = path.join(this.scripts, `${id}.sh`);
    fs.writeFileSync(script, `${command}\n`);
    const exports = Object.entries(env).map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'; `).join('');
    this.errors = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        this.shell.kill('SIGKILL');
        reject(new Error(`timed out after ${timeoutMs} ms: ${command}`));
      }, timeoutMs);
      this.pending = {
        // The command's output need not end with a newline (curl -w '%{http_code}'), hence the one before.
        marker: new RegExp(`\\n__shell_done_${id}__ (\\d+)\\n`),
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.shell.stdin.write(`(${exports}bash '${script}' </dev/null); printf '\\n__shell_done_${id}__ %d\\n' $?\n`);
    });
  }

  /** What the last command wrote to stderr. */
  get stderr(): string {
    return this.errors;
  }

  close(): void {
    this.shell.stdin.end();
    this.shell.kill();
    fs.rmSync(this.scripts, { recursive: true, force: true });
  }

  private settle(): void {
    const pending = this.pending;
    if (!pending) return;
    const match = pending.marker.exec(this.output);
    if (!match) return;
    const stdout = this.output.slice(0, match.index);
    this.output = this.output.slice(match.index + match[0].length);
    this.pending = null;
    pending.resolve({ stdout, code: Number(match[1]) });
  }
}
