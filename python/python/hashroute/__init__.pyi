from hashroute._hashroute import (
    ALGORITHMS as ALGORITHMS,
    HASHERS as HASHERS,
    KETAMA_VARIANTS as KETAMA_VARIANTS,
    Router as Router,
    slot as slot,
    token as token,
)

__version__: str
