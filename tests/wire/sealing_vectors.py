# The known answers of tests/wire/tst_recordcipher.cpp and
# tests/world/tst_keyschedule.cpp, computed without MMPI or OpenSSL's EVP calls
# as MMPI makes them: hashlib/hmac for HKDF and the proofs, the cryptography
# package (python3-cryptography) for AES-256-GCM and X25519. Run: python3 sealing_vectors.py
import struct, hashlib, hmac
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

def header(kind, itype, flags, comm, src, dst, root, tag, count, seq, length):
    return struct.pack('>IBBBBIiiiiIQI', 0x4D4D5049, 1, kind, itype, flags, comm, src, dst, root, tag, count, seq, length)

key = bytes(range(32))
inner_payload = b'hello'
inner = header(1, 2, 0, 0, 1, 0, -1, 7, 5, 1, 5) + inner_payload
sealed_len = len(inner) + 16
outer = header(7, 2, 0, 0, -1, -1, -1, 0, sealed_len, 1, sealed_len)
nonce = struct.pack('>IQ', 1, 1)
ct = AESGCM(key).encrypt(nonce, inner, outer)
print('record outer header', outer.hex())
print('record payload', ct.hex())
# second record, other direction
nonce2 = struct.pack('>IQ', 2, 2)
outer2 = header(7, 2, 0, 0, -1, -1, -1, 0, sealed_len, 2, sealed_len)
print('record2 payload (dir 2, seq 2)', AESGCM(key).encrypt(nonce2, inner, outer2).hex())

def hkdf(salt, ikm, info, n):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, t, i = b'', b'', 1
    while len(out) < n:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t; i += 1
    return out[:n]

def qba(b): return struct.pack('>I', len(b)) + b
def qstr(s):
    u = s.encode('utf-16-be'); return struct.pack('>I', len(u)) + u

transcript = (qba(b'MMPI/2 sealed link') + qstr('kat-world') + qstr('acceptor-node') + qba(b'\x11'*32) + qba(b'\x22'*32)
              + qba(b'\x33'*32) + qba(b'\x44'*32) + bytes([2]) + qstr('connector-node') + struct.pack('>i', 1)
              + qstr('tcp://127.0.0.1:7001'))
th = hashlib.sha256(transcript).digest()
shared = b'\x55'*32
world_key = b'correct horse'
okm = hkdf(b'\x11'*32 + b'\x22'*32, shared + world_key, b'MMPI/2 link keys' + th, 128)
print('transcript hash', th.hex())
for name, part in zip(['connectorProofKey', 'acceptorProofKey', 'c2a', 'a2c'], [okm[i:i+32] for i in range(0,128,32)]):
    print(name, part.hex())
print('connector proof', hmac.new(okm[0:32], b'MMPI/2 connector' + th, hashlib.sha256).hexdigest())
claim = qba(b'MMPI/2 acceptor') + qba(th) + struct.pack('>i', 0) + qstr('tcp://127.0.0.1:7000')
print('acceptor proof', hmac.new(okm[32:64], claim, hashlib.sha256).hexdigest())
# RFC 5869 test case 1
print('rfc5869', hkdf(bytes(range(13)), b'\x0b'*22, bytes(range(0xf0, 0xfa)), 42).hex())
# RFC 7748 section 6.1
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives import serialization
a = X25519PrivateKey.from_private_bytes(bytes.fromhex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'))
b = X25519PrivateKey.from_private_bytes(bytes.fromhex('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb'))
raw = lambda k: k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
print('alice public', raw(a)); print('bob public', raw(b)); print('shared', a.exchange(b.public_key()).hex())
