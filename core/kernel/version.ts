/**
 * @module version
 * The kernel's own version, used as the producer of the events the loop records itself.
 */
export const KernelVersion = '0.1.0'
export const KernelProducer = `kernel@${KernelVersion}`
