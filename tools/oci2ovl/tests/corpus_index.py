# SPDX-License-Identifier: GPL-2.0
"""Crafted layouts for oci2ovl's index, manifest and JSON rules, added to
lfs_tree.py gen-corpus (same cases.json format, same runner):

 - a manifest or index is what its descriptor says (CVE-2021-41190): its
   own mediaType matches, a manifest carries no "manifests", an index no
   "layers" or "config";
 - a tag names one descriptor;
 - entries of unknown media types and artifacts are skipped, at any depth;
   a tag with nothing usable is refused;
 - JSON blobs: size, digest and the 4 MiB bound, index.json included;
 - untrusted strings in messages are escaped (cases named esc-*, whose
   rule is the escaped text; tests/bats/host/21-oci2ovl-index.bats also
   checks that no raw control byte reaches stderr).

Each image holds one file, /id, whose content names it, so that an
accepted case shows which manifest was chosen.
"""
import hashlib
import json
import os

import lfs_tree as t

OCI_M = "application/vnd.oci.image.manifest.v1+json"
OCI_I = "application/vnd.oci.image.index.v1+json"
DOCKER_M = "application/vnd.docker.distribution.manifest.v2+json"
OCI_C = "application/vnd.oci.image.config.v1+json"
EMPTY = "application/vnd.oci.empty.v1+json"
INTOTO = "application/vnd.in-toto+json"
HELM = "application/vnd.cncf.helm.config.v1+json"
REF = "org.opencontainers.image.ref.name"
NOTHING = "no image manifest for platform linux/amd64"


def sha(data):
    return hashlib.sha256(data).hexdigest()


def img(d, content, arch="amd64", mt=OCI_M, edit=None, config_mt=OCI_C,
        layer_mt=t.MT_LAYER["gzip"], platform=True, os_name="linux"):
    """write an image whose /id holds @content; return its descriptor"""
    layer = t.tar([t.ti("id", data=content)])
    ld, ln = t.blob(d, t.compress(layer, "gzip"))
    cd, cn = t.jblob(d, {"architecture": arch, "os": os_name,
                         "rootfs": {"type": "layers",
                                    "diff_ids": ["sha256:" + sha(layer)]}})
    m = {"schemaVersion": 2, "mediaType": mt,
         "config": {"mediaType": config_mt, "digest": cd, "size": cn},
         "layers": [{"mediaType": layer_mt, "digest": ld, "size": ln}]}
    if edit:
        edit(m)
    md, mn = t.jblob(d, m)
    desc = {"mediaType": mt, "digest": md, "size": mn}
    if platform:
        desc["platform"] = {"os": os_name, "architecture": arch}
    return desc


def artifact(d, data=b'{"predicateType": "spdx"}', mt=INTOTO):
    """an opaque blob of some media type we do not know"""
    dd, dn = t.blob(d, data)
    return {"mediaType": mt, "digest": dd, "size": dn}


def artifact_manifest(d, name, artifact_type="application/spdx+json",
                      config_mt=EMPTY):
    """an OCI manifest that is an artifact, not an image"""
    ed, en = t.blob(d, b"{}")
    sbom = artifact(d, b'{"sbom": "%s"}' % name.encode())
    m = {"schemaVersion": 2, "mediaType": OCI_M,
         "config": {"mediaType": config_mt, "digest": ed, "size": en},
         "layers": [sbom]}
    if artifact_type:
        m["artifactType"] = artifact_type
    md, mn = t.jblob(d, m)
    return {"mediaType": OCI_M, "digest": md, "size": mn}


def index(d, descs, mt=OCI_I, edit=None):
    """write an image index; return its descriptor"""
    doc = {"schemaVersion": 2, "mediaType": mt, "manifests": descs}
    if edit:
        edit(doc)
    dd, dn = t.jblob(d, doc)
    return {"mediaType": mt, "digest": dd, "size": dn}


def tag(desc, name):
    desc = dict(desc)
    desc["annotations"] = {REF: name}
    return desc


def write_index_json(d, descs, edit=None):
    doc = {"schemaVersion": 2, "mediaType": OCI_I, "manifests": descs}
    if edit:
        edit(doc)
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump(doc, f)


def gen(out, cases):
    """add the index cases to @cases, their layouts under @out"""

    def case(name, expect, rule=None, want=None, args=()):
        """record a case whose layout make() has written under out/name"""
        c = {"name": name, "expect": expect, "rule": rule,
             "args": list(args), "must_contain": [], "must_not_contain": []}
        if want is not None:
            c["must_contain"] = [{"path": "/id", "type": "reg",
                                  "sha256": sha(want)}]
        cases.append(c)

    def lay(name):
        return t.layout(out, name, None)

    # --- a manifest or index is what its descriptor says (CVE-2021-41190)
    n = "mt-manifest-doc-says-index"
    d = lay(n)
    desc = img(d, b"x", edit=lambda m: m.update(mediaType=OCI_I))
    desc["mediaType"] = OCI_M
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", 'its mediaType "%s" differs from its descriptor\'s '
         '"%s"' % (OCI_I, OCI_M))

    n = "mt-index-doc-says-manifest"
    d = lay(n)
    desc = index(d, [img(d, b"x")], edit=lambda i: i.update(mediaType=OCI_M))
    desc["mediaType"] = OCI_I
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", 'its mediaType "%s" differs from its descriptor\'s '
         '"%s"' % (OCI_M, OCI_I))

    n = "mt-docker-doc-oci-descriptor"
    d = lay(n)
    desc = img(d, b"x", edit=lambda m: m.update(mediaType=DOCKER_M))
    desc["mediaType"] = OCI_M
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", "its mediaType \"%s\" differs" % DOCKER_M)

    # one blob that reads as a manifest and as an index (no mediaType):
    # refused whichever way a descriptor points at it
    for how, mt, rule in (
            ("manifest", OCI_M, 'a manifest must not carry "manifests"'),
            ("index", OCI_I, 'an index must not carry "layers" or "config"')):
        n = "polyglot-as-" + how
        d = lay(n)
        other = img(d, b"the index's image")

        def poly(m, other=other):
            del m["mediaType"]
            m["manifests"] = [other]
        desc = img(d, b"the manifest's image", edit=poly)
        desc["mediaType"] = mt
        desc.pop("platform")
        write_index_json(d, [tag(desc, n)])
        case(n, "reject", rule)

    n = "nested-index-carries-config"
    d = lay(n)
    inner = index(d, [img(d, b"x")],
                  edit=lambda i: i.update(config={"mediaType": OCI_C}))
    write_index_json(d, [tag(index(d, [inner]), n)])
    case(n, "reject", 'an index must not carry "layers" or "config"')

    n = "index-json-carries-layers"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"x"), n)],
                     edit=lambda i: i.update(layers=[]))
    case(n, "reject", 'index.json: an index must not carry "layers"')

    n = "index-json-says-manifest"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"x"), n)],
                     edit=lambda i: i.update(mediaType=OCI_M))
    case(n, "reject", 'index.json: its mediaType "%s" differs from the image '
         'index type "%s"' % (OCI_M, OCI_I))

    # mediaType in the document is a SHOULD: without it, the descriptor's
    n = "manifest-without-mediatype"
    d = lay(n)
    desc = img(d, b"no mediaType", edit=lambda m: m.pop("mediaType"))
    write_index_json(d, [tag(index(d, [desc], edit=lambda i: i.pop(
        "mediaType")), n)])
    case(n, "accept", want=b"no mediaType")

    # --- a tag names one descriptor
    n = "tag-two-descriptors"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"one"), n), tag(img(d, b"two"), n)])
    case(n, "reject", 'index.json: tag "%s" names two different '
         'descriptors' % n)

    n = "tag-two-platforms"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"arm", arch="arm64"), n),
                         tag(img(d, b"amd"), n)])
    case(n, "reject", 'tag "%s" names two different descriptors' % n)

    n = "tag-same-size-other-type"
    d = lay(n)
    desc = img(d, b"x")
    twin = dict(desc, mediaType=DOCKER_M)
    write_index_json(d, [tag(desc, n), tag(twin, n)])
    case(n, "reject", 'tag "%s" names two different descriptors (%s with '
         'another size or media type)' % (n, desc["digest"]))

    n = "tag-same-descriptor-twice"
    d = lay(n)
    desc = img(d, b"twice")
    write_index_json(d, [tag(desc, n), tag(desc, n)])
    case(n, "accept", want=b"twice")

    n = "tag-among-other-tags"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"other"), "other"),
                         tag(img(d, b"mine"), n),
                         tag(img(d, b"latest"), "latest")])
    case(n, "accept", want=b"mine")

    # an SBOM tagged like the image is skipped, not an ambiguity
    n = "tag-shared-with-sbom"
    d = lay(n)
    write_index_json(d, [tag(artifact(d), n), tag(img(d, b"image"), n)])
    case(n, "accept", want=b"image")

    # --- unknown entries and artifacts are skipped
    n = "index-sbom-and-attestation-beside-image"
    d = lay(n)
    att = img(d, b"attestation", arch="unknown", os_name="unknown",
              layer_mt=INTOTO)
    write_index_json(d, [tag(index(d, [artifact(d), att, img(d, b"image"),
                                       img(d, b"arm", arch="arm64")]), n)])
    case(n, "accept", want=b"image")

    # an artifactType on the descriptor: not even read (its blob is absent)
    n = "index-artifacttype-descriptor-not-read"
    d = lay(n)
    absent = {"mediaType": OCI_M, "artifactType": "application/spdx+json",
              "digest": "sha256:" + "0" * 64, "size": 10}
    write_index_json(d, [tag(index(d, [absent, img(d, b"image")]), n)])
    case(n, "accept", want=b"image")

    # an unknown entry is not parsed: a digest that is a path is no error
    n = "index-unknown-entry-not-parsed"
    d = lay(n)
    odd = {"mediaType": "application/xml", "digest": "sha256:../../x",
           "size": -1}
    write_index_json(d, [tag(index(d, [odd, img(d, b"image")]), n)])
    case(n, "accept", want=b"image")

    # the artifact is known only once read: skipped all the same
    n = "index-artifact-manifest-beside-image"
    d = lay(n)
    write_index_json(d, [tag(index(d, [artifact_manifest(d, n),
                                       img(d, b"image")]), n)])
    case(n, "accept", want=b"image")

    n = "index-unknown-config-type-beside-image"
    d = lay(n)
    helm = artifact_manifest(d, n, artifact_type=None, config_mt=HELM)
    write_index_json(d, [tag(index(d, [helm, img(d, b"image")]), n)])
    case(n, "accept", want=b"image")

    n = "tag-names-only-sbom"
    d = lay(n)
    write_index_json(d, [tag(artifact(d), n), tag(img(d, b"x"), "other")])
    case(n, "reject", 'image "%s": %s (skipped 1 entry of another media '
         'type or an artifact)' % (n, NOTHING))

    n = "tag-names-artifact-manifest"
    d = lay(n)
    write_index_json(d, [tag(artifact_manifest(d, n), n)])
    case(n, "reject", NOTHING + " (skipped 1 entry of another media type or "
         "an artifact; manifest sha256:")

    n = "tag-names-helm-chart"
    d = lay(n)
    write_index_json(d, [tag(artifact_manifest(d, n, artifact_type=None,
                                               config_mt=HELM), n)])
    case(n, "reject", 'config media type "%s" is not an image\'s' % HELM)

    n = "index-only-artifacts"
    d = lay(n)
    write_index_json(d, [tag(index(d, [artifact(d), artifact_manifest(
        d, n)]), n)])
    case(n, "reject", NOTHING + " (skipped 2 entries of other media types "
         "or artifacts; manifest sha256:")

    n = "index-only-other-platforms"
    d = lay(n)
    write_index_json(d, [tag(index(d, [img(d, b"a", arch="arm64"),
                                       img(d, b"s", arch="s390x")]), n)])
    case(n, "reject", NOTHING + " (other platforms: linux/arm64, "
         "linux/s390x)")

    # a nested index with nothing for us: the next entry is tried
    n = "nested-index-empty-then-image"
    d = lay(n)
    empty = index(d, [img(d, b"arm", arch="arm64"), artifact(d)])
    full = index(d, [img(d, b"image")])
    write_index_json(d, [tag(index(d, [empty, full]), n)])
    case(n, "accept", want=b"image")

    for depth, expect in ((4, "accept"), (5, "reject")):
        n = "nested-%d-indexes" % depth
        d = lay(n)
        desc = img(d, b"deep")
        for _ in range(depth):
            desc = index(d, [artifact(d), desc])
        write_index_json(d, [tag(desc, n)])
        case(n, expect, "nested more than 4 deep" if depth > 4 else None,
             want=b"deep" if depth <= 4 else None)

    # artifacts known only once read: at most 64 documents are read
    n = "index-fanout-bound"
    d = lay(n)
    many = [artifact_manifest(d, "%s-%d" % (n, i)) for i in range(70)]
    write_index_json(d, [tag(index(d, many + [img(d, b"image")]), n)])
    case(n, "reject", "more than 64 manifests and indexes to read")

    # --- JSON blobs: read once, size and digest checked, bounded
    def rewrite(d, desc, fn):
        p = os.path.join(d, "blobs", "sha256", desc["digest"][7:])
        with open(p, "rb") as f:
            data = f.read()
        with open(p, "wb") as f:
            f.write(fn(data))

    n = "manifest-blob-larger-than-descriptor"
    d = lay(n)
    desc = img(d, b"x")
    rewrite(d, desc, lambda b: b + b" " * (8 << 20))
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", "manifest %s: blob is larger than its descriptor's "
         "size %d" % (desc["digest"], desc["size"]))

    n = "manifest-blob-shorter-than-descriptor"
    d = lay(n)
    desc = img(d, b"x")
    rewrite(d, desc, lambda b: b[:-1])
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", "blob size %d differs from its descriptor's %d" %
         (desc["size"] - 1, desc["size"]))

    n = "index-blob-digest-mismatch"
    d = lay(n)
    desc = index(d, [img(d, b"x")])
    rewrite(d, desc, lambda b: b.replace(b"amd64", b"arm64"))
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", "index %s: blob digest sha256:" % desc["digest"])

    n = "config-declared-too-large"
    d = lay(n)
    desc = img(d, b"x", edit=lambda m: m["config"].update(size=5 << 20))
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", "declared size 5242880 exceeds 4194304 bytes")

    n = "index-json-too-large"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"x"), n)],
                     edit=lambda i: i.update(pad="p" * (4 << 20)))
    case(n, "reject", "index.json: larger than 4194304 bytes")

    n = "index-json-symlink"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"x"), n)])
    os.rename(os.path.join(d, "index.json"), os.path.join(d, "real.json"))
    os.symlink("real.json", os.path.join(d, "index.json"))
    case(n, "fail", "index.json: a symlink (not followed)")

    # --- untrusted strings are escaped in messages
    n = "esc-layer-media-type"
    d = lay(n)
    write_index_json(d, [tag(img(d, b"x", layer_mt="application/x\x1b]0;"
                                 "pwned\x07"), n)])
    case(n, "reject", r'unsupported layer media type "application/x\x1b]0;'
         r'pwned\x07"')

    n = "esc-document-media-type"
    d = lay(n)
    desc = img(d, b"x", edit=lambda m: m.update(mediaType="a\x1b[2J\u009b"))
    desc["mediaType"] = OCI_M
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", r'its mediaType "a\x1b[2J\xc2\x9b" differs')

    n = "esc-digest"
    d = lay(n)
    desc = img(d, b"x", edit=lambda m: m["config"].update(
        digest="sha256:\x1b[2J\\\"x"))
    write_index_json(d, [tag(desc, n)])
    case(n, "reject", r'digest "sha256:\x1b[2J\\\"x" is not sha256:')

    n = "esc-platform"
    d = lay(n)
    write_index_json(d, [tag(index(d, [img(d, b"x", os_name="l\x1b[31m\n")]),
                             n)])
    case(n, "reject", r"other platforms: l\x1b[31m\x0a/amd64")

    n = "esc-tag-digests"
    d = lay(n)
    evil = dict(img(d, b"x"), digest="sha256:\x1b[5m")
    write_index_json(d, [tag(img(d, b"y"), n), tag(evil, n)])
    case(n, "reject", r"and sha256:\x1b[5m)")

    n = "esc-json-error"
    d = lay(n)
    dd, dn = t.blob(d, b'{"a": \x1b[2J}')
    write_index_json(d, [tag({"mediaType": OCI_M, "digest": dd, "size": dn},
                             n)])
    case(n, "reject", r"malformed JSON at line 1, column 7: invalid token "
         r"near '\x1b'")
