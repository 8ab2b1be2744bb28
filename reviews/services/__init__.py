"""Every write of the reviews app: publication of a run directory (``publication``) with its
validation against the Atlas row (``validation``), the evidence intake (``intake``) and uploaded
archives (``archives``), publication jobs run by a worker (``jobs``), and the confirmation and
resolution of verifier defects (``defects``). Admin, API, commands and tasks all call these."""
