import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { type Bookings, bookRoom, findRoom } from './tools.ts'
import { bookingVerifier } from './verifier.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const bookings: Bookings = new Map()
  ctx.tools.register(findRoom(config.rooms))
  ctx.tools.register(bookRoom(config.rooms, bookings))
  ctx.set('verifier', bookingVerifier)
})
