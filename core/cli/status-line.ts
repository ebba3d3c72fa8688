/**
 * @module cli/status-line
 * One line on stderr, rewritten in place, saying what the run waits on and for how long: `⠋ model
 * call 2.3s`, `⠙ tool lookup_order 1.1s`. Drawn only on a terminal; the caller clears it before it
 * prints a line of its own and draws it again after, so it never mixes with the output.
 */
import type { RunEvent } from '../contracts/events.ts'

const Frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏'
const ClearLine = '\r\u001b[2K'

interface Work {
  label: string
  since: number
}

export class StatusLine {
  private readonly running = new Map<string, Work>()
  private frame = 0
  private shown = false
  private held = false
  private timer?: ReturnType<typeof setInterval>

  /**
   * @param write raw text to stderr
   * @param now the clock (a test gives its own)
   * @param tickMs how often the time is redrawn while something runs
   */
  constructor(
    private readonly write: (text: string) => void,
    private readonly now: () => number = Date.now,
    private readonly tickMs = 100,
  ) {}

  /** Follow one run event: a model call or tool starting shows, its end (or the run pausing or ending) clears. */
  event(event: RunEvent): void {
    const key = `${event.runId} ${event.actionId ?? event.stepId ?? ''}`
    switch (event.type) {
      case 'step/model-request':
        this.start(key, `model call${event.data.attempt > 1 ? ` (attempt ${event.data.attempt})` : ''}`)
        break
      case 'tool/start':
        this.start(key, `tool ${event.data.tool}${event.data.attempt > 1 ? ` (attempt ${event.data.attempt})` : ''}`)
        break
      case 'step/model-response':
      case 'step/model-error':
      case 'tool/end':
      case 'tool/error':
        this.end(key)
        break
      case 'run/paused':
      case 'run/end':
        for (const k of [...this.running.keys()]) if (k.startsWith(`${event.runId} `)) this.running.delete(k)
        this.redraw()
        break
    }
  }

  start(key: string, label: string): void {
    this.running.set(key, { label, since: this.now() })
    if (!this.timer) {
      this.timer = setInterval(() => this.redraw(), this.tickMs)
      // A status line never keeps the process alive.
      this.timer.unref?.()
    }
    this.redraw()
  }

  end(key: string): void {
    this.running.delete(key)
    this.redraw()
  }

  /** What the line says now (empty when nothing runs). The newest work is shown; others are counted. */
  text(): string {
    const works = [...this.running.values()]
    const latest = works.at(-1)
    if (!latest) return ''
    const seconds = ((this.now() - latest.since) / 1000).toFixed(1)
    const more = works.length > 1 ? ` (+${works.length - 1} more)` : ''
    return `${Frames[this.frame % Frames.length]} ${latest.label} ${seconds}s${more}`
  }

  /** Print a line of output: the status line is cleared first and drawn again after. */
  around(print: () => void): void {
    this.clear()
    print()
    this.redraw()
  }

  /** Keep the line off the screen while something else owns the terminal's current line (streamed text). */
  hold(held: boolean): void {
    this.held = held
    if (held) this.clear()
    else this.redraw()
  }

  /** Clear it for good: at the end of the command. */
  close(): void {
    clearInterval(this.timer)
    this.timer = undefined
    this.running.clear()
    this.clear()
  }

  private redraw(): void {
    const text = this.held ? '' : this.text()
    if (!text) {
      this.clear()
      if (this.running.size === 0) {
        clearInterval(this.timer)
        this.timer = undefined
      }
      return
    }
    this.frame++
    this.write(`${ClearLine}${text}`)
    this.shown = true
  }

  private clear(): void {
    if (!this.shown) return
    this.write(ClearLine)
    this.shown = false
  }
}
