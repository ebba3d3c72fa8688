/** The total of a cart: the sum of price × quantity, less a discount given in percent (0 to 100). */
export function total(items, discountPercent = 0) {
  if (discountPercent < 0 || discountPercent > 100) throw new RangeError('discountPercent must be between 0 and 100')
  const subtotal = items.reduce((sum, item) => sum + item.price * item.quantity, 0)
  return subtotal - subtotal * discountPercent
}
