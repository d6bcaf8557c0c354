"""A small corpus shaped like issue 27's cases: authors who share a surname (Yoshua and Samy
Bengio, Sergey and Sydney Levine), words a corrector mistook names for ("series", "engine"),
"agent" in more papers than "attention", "transformer" and "language" in many papers beside a
paper that misspells them, graph neural networks without over-smoothing, and three venues over
four years. Built in memory in well under a second."""

from __future__ import annotations

from bot.papers.records import Paper
from bot.search.engine import SearchEngine

TOPICS = (
    ("Graph neural networks for molecules", "Graph neural networks learn molecular properties."),
    ("Message passing graph networks", "Neural message passing on graph structured data."),
    ("Optimal transport with Sinkhorn iterations", "Entropic optimal transport is fast."),
    ("Diffusion models for image synthesis", "Denoising diffusion models generate images."),
    ("Language model agents that use tools", "Agents built on language models call tools."),
    ("Offline reinforcement learning from logged data", "Policies learned from fixed data."),
    ("Robot grasping with tactile sensing", "A robot hand grasps objects using touch."),
    ("Bayesian optimization of hyperparameters", "Gaussian process surrogates pick trials."),
    ("Contrastive learning of visual representations", "Augmented views are pulled together."),
    ("Federated learning under differential privacy", "Clients share noisy updates."),
)
AUTHORS = (
    ("Yoshua Bengio", "Aaron Courville"),
    ("Samy Bengio", "Oriol Vinyals"),
    ("Sergey Levine", "Chelsea Finn"),
    ("Sydney Levine", "Joshua Tenenbaum"),
    ("Percy Liang", "Tatsunori Hashimoto"),
    ("Yoshua Bengío",),  # the same person, spelt with an accent
    ("Y. Bengio", "Pascal Vincent"),
    ("Jörn-Henrik Jacobsen",),
)
VENUES = ("ICLR 2018", "ICML 2019", "COLM 2025")


def papers() -> list[Paper]:
    out: list[Paper] = []
    for i in range(40):
        title, abstract = TOPICS[i % len(TOPICS)]
        extra = [
            "An agent acts in an environment; agents cooperate.",  # agent: every paper
            "Attention layers in a transformer read language."
            if i % 2
            else "Engine series of experiments.",
        ]
        out.append(
            Paper(
                id=f"q{i:02d}",
                title=f"{title} {i}" if i >= len(TOPICS) else title,
                abstract=" ".join([abstract, *extra]),
                venue=VENUES[i % 3],
                year=2018 + i % 4,
                authors=AUTHORS[i % len(AUTHORS)],
            )
        )
    # The corpus's own typos: one paper each (issue 27: "tranformer langauge").
    out.append(
        Paper(
            id="typo",
            title="Scaling a tranformer for langauge modelling",
            abstract="We scale the model.",
            venue="COLM 2025",
            year=2025,
        )
    )
    out.append(
        Paper(
            id="sun",
            title="Solar panels stay cool",
            abstract="Panels that stay in the shade; the sun heats them.",
            venue="COLM 2025",
            year=2025,
        )
    )
    return out


def engine() -> SearchEngine:
    return SearchEngine(papers())
