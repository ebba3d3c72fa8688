// One-off generator of the JSON texts of bench/tokens (seeded, so reruns give the same files).
const [seed, out] = [Number(process.argv[2]), process.argv[3]]
let s = seed
const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648)
const pick = (a) => a[Math.floor(rnd() * a.length)]
const int = (a, b) => a + Math.floor(rnd() * (b - a + 1))
const words = 'order refund parcel damaged courier delivery invoice customer warranty return window policy shipping address payment card status pending approved rejected label photo item size colour replacement ticket priority agent note'.split(' ')
const names = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra', 'Barbara Liskov', 'Ken Thompson', 'Frances Allen']
const sentence = () => { const n = int(5, 14); const w = []; for (let i = 0; i < n; i++) w.push(pick(words)); const t = w.join(' '); return t[0].toUpperCase() + t.slice(1) + '.' }
const hex = (n) => { let t = ''; for (let i = 0; i < n; i++) t += '0123456789abcdef'[int(0, 15)]; return t }
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(['8','9','a','b'])}${hex(3)}-${hex(12)}`
const date = () => `2025-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}T${String(int(0, 23)).padStart(2, '0')}:${String(int(0, 59)).padStart(2, '0')}:${String(int(0, 59)).padStart(2, '0')}Z`
const templates = [
  () => ({ orders: Array.from({ length: int(2, 6) }, () => ({ id: `ord_${hex(10)}`, customer: pick(names), status: pick(['pending', 'shipped', 'delivered', 'refunded']), total: { amount: int(500, 99999) / 100, currency: pick(['EUR', 'USD', 'GBP']) }, items: Array.from({ length: int(1, 3) }, () => ({ sku: `SKU-${int(1000, 9999)}`, qty: int(1, 4), price: int(199, 9999) / 100 })), created_at: date() })), next_cursor: hex(16), has_more: rnd() > 0.5 }),
  () => ({ results: Array.from({ length: int(3, 7) }, (_, i) => ({ rank: i + 1, score: Math.round(rnd() * 1000) / 1000, title: sentence(), url: `https://docs.example.com/${pick(words)}/${pick(words)}-${int(1, 99)}`, snippet: `${sentence()} ${sentence()}` })), query: `${pick(words)} ${pick(words)}`, took_ms: int(3, 250) }),
  () => ({ id: uuid(), type: 'ticket', attributes: { subject: sentence(), priority: pick(['low', 'normal', 'high', 'urgent']), tags: Array.from({ length: int(1, 4) }, () => pick(words)), requester: { name: pick(names), email: `user${int(1, 999)}@example.org` }, comments: Array.from({ length: int(1, 4) }, () => ({ author: pick(names), body: `${sentence()} ${sentence()}`, public: rnd() > 0.3, at: date() })) }, meta: { version: int(1, 40), etag: `W/"${hex(12)}"` } }),
  () => ({ location: { lat: Math.round((rnd() * 180 - 90) * 1e4) / 1e4, lon: Math.round((rnd() * 360 - 180) * 1e4) / 1e4 }, hourly: Array.from({ length: int(6, 12) }, (_, h) => ({ hour: h, temp_c: Math.round((rnd() * 30 - 5) * 10) / 10, rain_mm: Math.round(rnd() * 50) / 10, wind_kph: int(0, 60) })) }),
  () => ({ ok: rnd() > 0.2, error: rnd() > 0.5 ? null : { code: pick(['not_found', 'rate_limited', 'invalid_argument']), message: sentence() }, data: Object.fromEntries(Array.from({ length: int(4, 9) }, () => [pick(words) + '_' + pick(words), pick([int(0, 100000), sentence(), rnd() > 0.5, null, hex(int(6, 20))])])) }),
]
const texts = []
for (let i = 0; i < 8; i++) {
  const value = templates[i % templates.length]()
  texts.push((i + Number(process.argv[4] ?? 0)) % 2 === 0 ? JSON.stringify(value, null, 2) : JSON.stringify(value))
}
(await import("node:fs")).writeFileSync(out, texts.join('\n%%%%\n') + '\n')
