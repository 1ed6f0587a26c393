/** A hook's stdin, read whole by the hook lane or the daemon lane before they know who answers it. */

const MAX_STDIN_BYTES = 1024 * 1024;
const STDIN_WAIT_MS = 5000;

/** The hook's stdin, bounded in size and in waiting (an agent that never closes it still gets its exit). */
export function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      process.stdin.pause();
      process.stdin.removeAllListeners('data');
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(finish, STDIN_WAIT_MS);
    timer.unref();
    if (process.stdin.isTTY) {
      finish();
      return;
    }
    process.stdin.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_STDIN_BYTES) {
        chunks.length = 0;
        chunks.push(Buffer.from('{"oversized":true}'));
        finish();
        return;
      }
      chunks.push(c);
    });
    process.stdin.on('end', finish);
    process.stdin.on('error', finish);
  });
}
