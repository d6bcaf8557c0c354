"""Reference files to references (`bot.library.references`); the import's one-transaction save
(`Library.save_many`) is tested with the store (tests/library/test_store.py)."""

from __future__ import annotations

import pytest

from bot.library.references import Reference, UnreadableFile, read_references


def test_bibtex_fields_used_for_matching() -> None:
    fmt, refs = read_references(
        "x.bib",
        rb"""@article{a, title = {{BERT}: Pre-training \& {$\ell_1$} Things},
                  eprint = {1810.04805v2}, archivePrefix = {arXiv}, doi = {10.18653/V1/N19-1423}}
             @misc{b, title = {Other}, note = {paper id: iclr2026/Xy12}}
             @misc{c, title = {Third}, url = {https://arxiv.org/abs/2401.01234v3}}""",
    )
    assert fmt == "bibtex"
    assert refs[0] == Reference(
        "BERT: Pre-training & ℓ₁ Things", "10.18653/v1/n19-1423", "1810.04805"
    )
    assert refs[1].paper_id == "iclr2026/Xy12"
    assert refs[2].arxiv == "2401.01234"


def test_ris_and_csljson_fields_used_for_matching() -> None:
    ris = b"TY  - JOUR\nT1  - A Title\nDO  - https://doi.org/10.48550/arXiv.2401.01234\nER  - \n"
    assert read_references("x.ris", ris)[1] == [
        Reference("A Title", "10.48550/arxiv.2401.01234", "2401.01234")
    ]
    csl = b'{"title": "T", "number": "arXiv:2305.00001", "DOI": "10.1234/X"}'
    assert read_references("x.json", csl) == (
        "csljson",
        [Reference("T", "10.1234/x", "2305.00001")],
    )
    # Without an extension, the content decides.
    assert read_references("upload", ris)[0] == "ris"


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("empty.bib", b"% nothing here\n", "holds no BibTeX entry"),
        ("dup.bib", b"@misc{a, title={A}}\n@misc{a, title={B}}", "repeated bibliography entry"),
        ("cut.ris", b"TY  - JOUR\nTI  - A\n", "0 complete record(s) of 1"),
        ("obj.json", b'{"a": [1, 2', "the CSL-JSON does not parse"),
        ("num.json", b"[1, 2]", "must be an array of items"),
        ("big.bib", b" " * (8 * 2**20 + 1), "the bot reads files of up to 8 MiB"),
    ],
)
def test_unreadable_files_are_refused_whole(name: str, data: bytes, says: str) -> None:
    with pytest.raises(UnreadableFile, match=None) as caught:
        read_references(name, data)
    assert says in str(caught.value)
