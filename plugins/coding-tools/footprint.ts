/**
 * What a call touches, as a workspace path, so the kernel can run the calls of one step side by side
 * (Tool.footprint): reads of different files together, an edit apart from anything that reads or
 * writes its file or a folder above it. The whole workspace (`.`) is everything.
 */
import { posix } from 'node:path'
import type { Footprint } from 'cordage'

export function pathOf(path: string): string {
  const normal = posix
    .normalize(path.replace(/\\/g, '/'))
    .replace(/^\.\/+/, '')
    .replace(/\/+$/, '')
  return normal === '.' || normal === '' ? '*' : normal
}

export const reads = (path: string): Footprint => ({ reads: [pathOf(path)] })
export const writes = (path: string): Footprint => ({ writes: [pathOf(path)] })
