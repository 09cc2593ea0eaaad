// The protobuf wire format's error and writer: the few small messages Waggle answers with
// (Export*ServiceResponse, google.rpc.Status). Requests are read by decode-proto.ts; the format
// is https://protobuf.dev/programming-guides/encoding/.

/** The body is not a valid protobuf message of the expected type: answered 400 (InvalidArgument). */
export class WireError extends Error {}

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
    this.varint(field << 3); // wire type 0, varint
    this.varint(v);
    return this;
  }

  bytes(field: number, v: Buffer): this {
    this.varint((field << 3) | 2); // wire type 2, length-delimited
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
