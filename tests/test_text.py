"""Shared text handling: sentence splitting, links, title keys."""

from paperatlas.text import find_urls, normalize_title, split_sentences


def test_sentence_splitter_keeps_citations_and_initials_together():
    text = ("While these techniques focused on pre-trained NN (LeCun et al., 1990), recent work by Lee et al. (2018) "
            "has shown promising results. We follow J. Smith and use e.g. CIFAR-10. Fig. 2 shows it!")
    assert split_sentences(text) == [
        "While these techniques focused on pre-trained NN (LeCun et al., 1990), recent work by Lee et al. (2018) "
        "has shown promising results.",
        "We follow J. Smith and use e.g. CIFAR-10.",
        "Fig. 2 shows it!",
    ]


def test_words_ending_like_an_abbreviation_still_end_a_sentence():
    # "several." / "neural." end in "al." like "et al." (seen in the SAM abstract of the ICLR 2021 listing)
    text = ("SAM yields state-of-the-art performance for several. Additionally, we find robustness to label noise. "
            "The model is neural. No. 5 is a number.")
    assert split_sentences(text) == ["SAM yields state-of-the-art performance for several.",
                                     "Additionally, we find robustness to label noise.", "The model is neural.",
                                     "No. 5 is a number."]


def test_urls_lose_markdown_escapes_and_trailing_punctuation():
    assert find_urls("code at https://github.com/huanzhang12/ATLA\\_robust\\_RL. See <https://x.org/a>.") == [
        "https://github.com/huanzhang12/ATLA_robust_RL", "https://x.org/a"]


def test_title_key_ignores_case_accents_and_punctuation():
    assert normalize_title("Sharpness-Aware Minimization: Schölkopf's $\\ell_p$") == \
        normalize_title("sharpness aware minimization  scholkopf s p")  # LaTeX commands dropped
