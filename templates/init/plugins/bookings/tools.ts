import { CordageError, defineTool } from 'cordage'
import { z } from 'zod'
import type { Config } from './manifest.ts'

export function findRoom(rooms: Config['rooms']) {
  return defineTool({
    name: 'find_room',
    description: 'Find the rooms that seat at least this many people.',
    input: z.object({ people: z.number().int().min(1) }),
    sideEffect: 'none',
    run: ({ people }) => {
      const fits = Object.entries(rooms)
        .filter(([, room]) => room.seats >= people)
        .map(([roomId, room]) => ({ roomId, ...room }))
      return { output: fits }
    },
  })
}

/** Bookings made by this process, so that booking the same room and day twice (a retry) gives one reference. */
export type Bookings = Map<string, string>

export function bookRoom(rooms: Config['rooms'], bookings: Bookings) {
  return defineTool({
    name: 'book_room',
    description: 'Book a room for a day (YYYY-MM-DD) and a number of people; returns the booking reference.',
    input: z.object({
      roomId: z.string(),
      day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'days look like 2026-03-14'),
      people: z.number().int().min(1),
    }),
    sideEffect: 'local',
    idempotent: true,
    run: ({ roomId, day, people }) => {
      const room = rooms[roomId]
      if (!room) throw new CordageError('tool_failed', `no room ${roomId}`)
      if (people > room.seats) throw new CordageError('tool_failed', `${room.name} seats ${room.seats}, not ${people}`)
      const key = `${roomId}/${day}`
      const ref = bookings.get(key) ?? `BK-${bookings.size + 1}`
      bookings.set(key, ref)
      return { output: { ref, roomId, day }, observation: `Booked ${room.name} on ${day} for ${people}: ${ref}` }
    },
  })
}
