"""Emulated flash devices with programmed behaviour: caches, fakes, bad blocks, pauses.

`FlashModel` says what the device does (the truth), `EmulatedFlash` makes it a real block
device (nbdkit + nbdfuse + a direct-I/O loop device). See docs/emulated-flash.md.

The nbdkit plugin imports model.py and engine.py inside nbdkit's embedded interpreter; this
package's imports stay within the standard library and flashmark for that reason.
"""
