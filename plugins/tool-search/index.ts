import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { ToolSearch } from './tool-search.ts'

export { ToolSearch } from './tool-search.ts'
export { SearchIndex, DefaultRanking, type Ranking, type Hit, type Indexable } from './search-index.ts'
export { SearchToolName } from './search-tool.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.plugin(ToolSearch, config)
})
