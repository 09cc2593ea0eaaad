// The protobuf wire format, just what OTLP needs: reading the requests (varints, fixed 32/64-bit
// numbers, length-delimited fields, skipping unknown fields) and writing the few small messages
// Waggle answers with (Export*ServiceResponse, google.rpc.Status). Field numbers are in the
// decoders (decode-proto.ts); the format is https://protobuf.dev/programming-guides/encoding/.
//
// Why not protobufjs: docs/otlp.md ("Decoding") has the measurement. In short, decoding straight
// into the few objects translation needs took a fraction of the time of protobufjs's generic
// decode (which also makes a Long per 64-bit time and an object per message), and the
// OpenTelemetry JS SDK went the same way for its own serialisers.

/** The body is not a valid protobuf message of the expected type: answered 400 (InvalidArgument). */
export class WireError extends Error {}

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

/** A cursor over one message's bytes [pos, end) within `buf`. */
export class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  static of(buf: Buffer): Reader {
    return new Reader(buf, 0, buf.length);
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint of up to 32 significant bits (tags, lengths, enums, int32, uint32, bool), as an unsigned number. */
  uint32(): number {
    const buf = this.buf;
    let pos = this.pos;
    let b = buf[pos++];
    let v = b & 0x7f;
    if (b >= 0x80) {
      b = buf[pos++];
      v |= (b & 0x7f) << 7;
      if (b >= 0x80) {
        b = buf[pos++];
        v |= (b & 0x7f) << 14;
        if (b >= 0x80) {
          b = buf[pos++];
          v |= (b & 0x7f) << 21;
          if (b >= 0x80) {
            b = buf[pos++];
            v += (b & 0x0f) * 2 ** 28; // the 4 bits left of 32; a longer varint (a negative int32) goes on
            if (b >= 0x80) {
              // Bits past 32 are dropped, as protobuf does for 32-bit fields.
              let n = 0;
              while (buf[pos++] >= 0x80) if (++n > 4) throw new WireError('varint is too long');
            }
          }
        }
      }
    }
    if (pos > this.end) throw new WireError('message ends inside a varint');
    this.pos = pos;
    return v >>> 0;
  }

  /** A varint as a signed 64-bit integer (int64), as a number (exact up to 2^53). */
  int64(): number {
    const [lo, hi] = this.varint64();
    return hi & 0x80000000 ? -((~hi >>> 0) * 2 ** 32 + (~lo >>> 0) + 1) : hi * 2 ** 32 + lo;
  }

  /** A varint as an unsigned 64-bit integer (uint64), as a number (exact up to 2^53). */
  uint64(): number {
    const [lo, hi] = this.varint64();
    return hi * 2 ** 32 + lo;
  }

  /** A zigzag varint (sint32). */
  sint32(): number {
    const v = this.uint32();
    return (v >>> 1) ^ -(v & 1);
  }

  private varint64(): [number, number] {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    let pos = this.pos;
    let shift = 0;
    let b: number;
    // The low 28 bits, then 4 bits split across the words, then the high 31 bits.
    do {
      b = buf[pos++];
      if (shift < 28) lo |= (b & 0x7f) << shift;
      else if (shift === 28) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >>> 4;
      } else hi |= (b & 0x7f) << (shift - 32);
      shift += 7;
      if (shift > 70) throw new WireError('varint is too long');
    } while (b >= 0x80);
    if (pos > this.end) throw new WireError('message ends inside a varint');
    this.pos = pos;
    return [lo >>> 0, hi >>> 0];
  }

  private need(n: number): number {
    const at = this.pos;
    if (at + n > this.end) throw new WireError('message ends inside a field');
    this.pos = at + n;
    return at;
  }

  fixed32(): number {
    return this.buf.readUInt32LE(this.need(4));
  }

  double(): number {
    return this.buf.readDoubleLE(this.need(8));
  }

  /** A fixed64 as a number (counts; exact up to 2^53). */
  fixed64(): number {
    const at = this.need(8);
    return this.buf.readUInt32LE(at + 4) * 2 ** 32 + this.buf.readUInt32LE(at);
  }

  /** A fixed64 as its two 32-bit halves: [low, high] (times in nanoseconds need all 64 bits). */
  fixed64Halves(): [number, number] {
    const at = this.need(8);
    return [this.buf.readUInt32LE(at), this.buf.readUInt32LE(at + 4)];
  }

  /** A length-delimited field: returns its start and moves past it. */
  private delimited(): number {
    const len = this.uint32();
    return this.need(len);
  }

  /** A nested message: a reader over its bytes. */
  message(): Reader {
    const start = this.delimited();
    return new Reader(this.buf, start, this.pos);
  }

  /** The bounds [start, end) of a length-delimited field. */
  span(): [number, number] {
    const start = this.delimited();
    return [start, this.pos];
  }

  /** A string (invalid UTF-8 becomes U+FFFD, as when a JSON body is read). */
  string(): string {
    const start = this.delimited();
    return start === this.pos ? '' : this.buf.toString('utf8', start, this.pos);
  }

  /** A bytes field as lowercase hex (trace and span ids). */
  hex(): string {
    const start = this.delimited();
    return start === this.pos ? '' : this.buf.toString('hex', start, this.pos);
  }

  /** A bytes field as base64. */
  base64(): string {
    const start = this.delimited();
    return this.buf.toString('base64', start, this.pos);
  }

  /** Skips a field of the given wire type (an unknown field, or a known one with another wire type). */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.uint64();
        return;
      case WIRE_FIXED64:
        this.need(8);
        return;
      case WIRE_LEN:
        this.delimited();
        return;
      case WIRE_FIXED32:
        this.need(4);
        return;
      default:
        throw new WireError(`unsupported wire type ${wireType}`);
    }
  }

  /** Reads a packed (or one unpacked) repeated field of numbers with `read`. */
  repeated(wireType: number, packedOf: number, read: (r: Reader) => number, out: number[]): void {
    if (wireType !== WIRE_LEN) {
      if (wireType !== packedOf) return this.skip(wireType);
      out.push(read(this));
      return;
    }
    const r = this.message();
    while (!r.done) out.push(read(r));
  }
}

/** Builds a protobuf message: fields in order, nested messages as finished bytes. */
export class Writer {
  private readonly parts: Buffer[] = [];

  private varint(v: number): void {
    const bytes: number[] = [];
    while (v >= 0x80) {
      bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    bytes.push(v);
    this.parts.push(Buffer.from(bytes));
  }

  /** A non-negative integer field (int32, int64 and enums of non-negative values). */
  uint(field: number, v: number): this {
    if (v === 0) return this; // proto3: zero is the default, not written
    this.varint((field << 3) | WIRE_VARINT);
    this.varint(v);
    return this;
  }

  bytes(field: number, v: Buffer): this {
    this.varint((field << 3) | WIRE_LEN);
    this.varint(v.length);
    this.parts.push(v);
    return this;
  }

  string(field: number, v: string): this {
    return v === '' ? this : this.bytes(field, Buffer.from(v, 'utf8'));
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}
