/** The support policy the desk looks up. Each entry has a stable source reference agents must cite. */
export interface PolicyEntry {
  topic: string
  source: string
  text: string
}

export const Knowledge: PolicyEntry[] = [
  {
    topic: 'refunds',
    source: 'policy/refunds#2',
    text: 'Damaged items can be refunded in full within 30 days of delivery, with a photo of the damage.',
  },
  { topic: 'returns', source: 'policy/returns#1', text: 'Unused items can be returned within 14 days; the customer pays return shipping.' },
  { topic: 'shipping', source: 'policy/shipping#4', text: 'Standard shipping takes 3 to 5 working days; express takes 1 working day.' },
  { topic: 'warranty', source: 'policy/warranty#1', text: 'Electronics carry a 2-year warranty covering manufacturing defects.' },
]
