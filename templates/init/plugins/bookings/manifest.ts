import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Room {
  name: string
  /** How many people fit in it. */
  seats: number
}

export interface Config {
  /** The rooms that can be booked, by id. */
  rooms: Record<string, Room>
}

export default {
  name: 'bookings',
  version: '0.1.0',
  description: 'Meeting rooms: find a room, book it, verify that an answer names a booking made in the run.',
  requires: { tools: '^1.0.0' },
  provides: { verifier: '1.0.0' },
  config: Schema.object({
    rooms: Schema.dict(
      Schema.object({
        name: Schema.string().required(),
        seats: Schema.natural().min(1).required(),
      }),
    )
      .default({})
      .description('Rooms by id.'),
  }),
} satisfies Manifest
